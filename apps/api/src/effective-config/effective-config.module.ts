import { Module } from '@nestjs/common';
import {
  EffectiveConfigReader,
  GetProjectEffectiveConfigUseCase,
  GetSessionEffectiveConfigUseCase,
  SettingsAccess,
} from '@hearth/app';
import {
  ProjectEffectiveConfigController,
  SessionEffectiveConfigController,
} from './effective-config.controller';

@Module({
  controllers: [ProjectEffectiveConfigController, SessionEffectiveConfigController],
  providers: [
    SettingsAccess,
    EffectiveConfigReader,
    GetProjectEffectiveConfigUseCase,
    GetSessionEffectiveConfigUseCase,
  ],
})
export class EffectiveConfigModule {}
