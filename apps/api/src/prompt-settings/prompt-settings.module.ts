import { Module } from '@nestjs/common';
import {
  GetPromptRuntimeAssetsUseCase,
  GetPromptSettingsUseCase,
  PutPromptSettingsUseCase,
} from '@hearth/app';
import { PromptSettingsController } from './prompt-settings.controller';

@Module({
  controllers: [PromptSettingsController],
  providers: [GetPromptSettingsUseCase, PutPromptSettingsUseCase, GetPromptRuntimeAssetsUseCase],
})
export class PromptSettingsModule {}
