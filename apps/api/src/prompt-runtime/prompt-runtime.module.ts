import { Module } from '@nestjs/common';
import {
  CreatePromptInjectionUseCase,
  DeletePromptInjectionUseCase,
  GetPromptPolicyUseCase,
  ListPromptInjectionsUseCase,
  UpdatePromptInjectionUseCase,
  UpdatePromptPolicyUseCase,
} from '@hearth/app';
import { PromptRuntimeController } from './prompt-runtime.controller';

@Module({
  controllers: [PromptRuntimeController],
  providers: [
    GetPromptPolicyUseCase,
    UpdatePromptPolicyUseCase,
    ListPromptInjectionsUseCase,
    CreatePromptInjectionUseCase,
    UpdatePromptInjectionUseCase,
    DeletePromptInjectionUseCase,
  ],
})
export class PromptRuntimeModule {}
