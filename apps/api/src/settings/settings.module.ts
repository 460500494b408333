import { Module } from '@nestjs/common';
import {
  GetLlmProfileOverrideUseCase,
  ListMcpBindingsUseCase,
  ListToolPolicyOverridesUseCase,
  PutLlmProfileOverrideUseCase,
  PutMcpBindingUseCase,
  PutToolPolicyOverrideUseCase,
  SettingsAccess,
  SettingsJournal,
} from '@hearth/app';
import { SettingsController } from './settings.controller';

@Module({
  controllers: [SettingsController],
  providers: [
    SettingsAccess,
    SettingsJournal,
    GetLlmProfileOverrideUseCase,
    PutLlmProfileOverrideUseCase,
    ListMcpBindingsUseCase,
    PutMcpBindingUseCase,
    ListToolPolicyOverridesUseCase,
    PutToolPolicyOverrideUseCase,
  ],
})
export class SettingsModule {}
