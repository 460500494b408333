import { Module } from '@nestjs/common';
import {
  CreateToolPolicyUseCase,
  DeleteToolPolicyUseCase,
  GetToolPolicyUseCase,
  ListToolPoliciesUseCase,
  UpdateToolPolicyUseCase,
} from '@hearth/app';
import { ToolPoliciesController } from './tool-policies.controller';

@Module({
  controllers: [ToolPoliciesController],
  providers: [
    CreateToolPolicyUseCase,
    ListToolPoliciesUseCase,
    GetToolPolicyUseCase,
    UpdateToolPolicyUseCase,
    DeleteToolPolicyUseCase,
  ],
})
export class ToolPoliciesModule {}
