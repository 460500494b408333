import { Module } from '@nestjs/common';
import {
  DeletePresetUseCase,
  ExportPresetUseCase,
  GetPresetUseCase,
  GetPresetVersionUseCase,
  ImportPresetUseCase,
  ListPresetsUseCase,
  ListPresetVersionsUseCase,
  RollbackPresetUseCase,
  UpdatePresetUseCase,
} from '@hearth/app';
import { PresetsController } from './presets.controller';
import { PresetTransferController } from './preset-transfer.controller';

@Module({
  controllers: [PresetsController, PresetTransferController],
  providers: [
    ImportPresetUseCase,
    ExportPresetUseCase,
    ListPresetsUseCase,
    GetPresetUseCase,
    ListPresetVersionsUseCase,
    GetPresetVersionUseCase,
    UpdatePresetUseCase,
    RollbackPresetUseCase,
    DeletePresetUseCase,
  ],
})
export class PresetsModule {}
