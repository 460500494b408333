import { Module } from '@nestjs/common';
import {
  ArchiveDerivedOutputUseCase,
  CreateDerivedOutputUseCase,
  DerivedOutputAccess,
  DerivedOutputJournal,
  GetDerivedOutputUseCase,
  ListDerivedOutputsUseCase,
  UpdateDerivedOutputUseCase,
} from '@hearth/app';
import { DerivedOutputsController } from './derived-outputs.controller';

@Module({
  controllers: [DerivedOutputsController],
  providers: [
    DerivedOutputAccess,
    DerivedOutputJournal,
    ListDerivedOutputsUseCase,
    CreateDerivedOutputUseCase,
    GetDerivedOutputUseCase,
    UpdateDerivedOutputUseCase,
    ArchiveDerivedOutputUseCase,
  ],
})
export class DerivedOutputsModule {}
