import { Module } from '@nestjs/common';
import { GetPromptSettingsUseCase, PutPromptSettingsUseCase } from '@hearth/app';
import { PromptSettingsController } from './prompt-settings.controller';

@Module({
  controllers: [PromptSettingsController],
  providers: [GetPromptSettingsUseCase, PutPromptSettingsUseCase],
})
export class PromptSettingsModule {}
