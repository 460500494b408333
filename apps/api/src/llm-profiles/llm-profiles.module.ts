import { Module } from '@nestjs/common';
import {
  ActivateLlmProfileUseCase,
  CreateLlmProfileUseCase,
  DeleteLlmProfileUseCase,
  DiscoverModelsUseCase,
  GetLlmInstancesUseCase,
  GetLlmProfileUseCase,
  GetLlmRuntimeUseCase,
  ListLlmProfilesUseCase,
  ResolveModelForTurnUseCase,
  TestModelUseCase,
  UnbindLlmProfileUseCase,
  UpdateLlmProfileUseCase,
} from '@hearth/app';
import { LlmInstancesController, LlmProfilesController } from './llm-profiles.controller';

/** LLM profiles, bindings and slot resolution. Exports the turn resolver for the conversation runtime. */
@Module({
  controllers: [LlmProfilesController, LlmInstancesController],
  providers: [
    CreateLlmProfileUseCase,
    ListLlmProfilesUseCase,
    GetLlmProfileUseCase,
    UpdateLlmProfileUseCase,
    DeleteLlmProfileUseCase,
    ActivateLlmProfileUseCase,
    UnbindLlmProfileUseCase,
    GetLlmRuntimeUseCase,
    GetLlmInstancesUseCase,
    DiscoverModelsUseCase,
    TestModelUseCase,
    ResolveModelForTurnUseCase,
  ],
  exports: [ResolveModelForTurnUseCase],
})
export class LlmProfilesModule {}
