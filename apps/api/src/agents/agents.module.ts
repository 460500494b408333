import { Module } from '@nestjs/common';
import {
  AgentProjectAccess,
  CancelAgentJobUseCase,
  ChangeAgentBindingStatusUseCase,
  ChangeAgentTypeStatusUseCase,
  CreateAgentBindingUseCase,
  CreateAgentTypeUseCase,
  GetAgentBindingUseCase,
  GetAgentJobUseCase,
  GetAgentTypeUseCase,
  JobsModule,
  ListAgentBindingsUseCase,
  ListAgentJobsUseCase,
  ListAgentTypesUseCase,
  RequestAgentBindingRunUseCase,
  UpdateAgentBindingUseCase,
  UpdateAgentTypeUseCase,
} from '@hearth/app';
import { AgentBindingsController } from './agent-bindings.controller';
import { AgentJobsController } from './agent-jobs.controller';
import { AgentTypesController } from './agent-types.controller';

/** Spec 1 "Agent Types", "Agent Bindings", "Agent jobs": the API side (runs execute in the worker). */
@Module({
  imports: [JobsModule.register()],
  controllers: [AgentTypesController, AgentBindingsController, AgentJobsController],
  providers: [
    AgentProjectAccess,
    ListAgentTypesUseCase,
    GetAgentTypeUseCase,
    CreateAgentTypeUseCase,
    UpdateAgentTypeUseCase,
    ChangeAgentTypeStatusUseCase,
    ListAgentBindingsUseCase,
    GetAgentBindingUseCase,
    CreateAgentBindingUseCase,
    UpdateAgentBindingUseCase,
    ChangeAgentBindingStatusUseCase,
    RequestAgentBindingRunUseCase,
    ListAgentJobsUseCase,
    GetAgentJobUseCase,
    CancelAgentJobUseCase,
  ],
})
export class AgentsModule {}
