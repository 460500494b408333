import { Module } from '@nestjs/common';
import {
  BatchDeleteWorldbookEntriesUseCase,
  BatchUpdateWorldbookEntriesUseCase,
  CreateWorldbookEntryUseCase,
  DeleteWorldbookEntryUseCase,
  DeleteWorldbookUseCase,
  ExportWorldbookUseCase,
  GetWorldbookEntryUseCase,
  GetWorldbookUseCase,
  GetWorldbookVersionUseCase,
  ImportWorldbookUseCase,
  ListWorldbookEntriesUseCase,
  ListWorldbooksUseCase,
  ListWorldbookVersionsUseCase,
  ReorderWorldbookEntriesUseCase,
  RollbackWorldbookUseCase,
  UpdateWorldbookEntryUseCase,
  UpdateWorldbookUseCase,
  WorldbookJournal,
} from '@hearth/app';
import { WorldbookEntriesController } from './worldbook-entries.controller';
import { WorldbookTransferController } from './worldbook-transfer.controller';
import { WorldbooksController } from './worldbooks.controller';

@Module({
  controllers: [WorldbooksController, WorldbookEntriesController, WorldbookTransferController],
  providers: [
    WorldbookJournal,
    ImportWorldbookUseCase,
    ExportWorldbookUseCase,
    ListWorldbooksUseCase,
    GetWorldbookUseCase,
    UpdateWorldbookUseCase,
    DeleteWorldbookUseCase,
    ListWorldbookVersionsUseCase,
    GetWorldbookVersionUseCase,
    RollbackWorldbookUseCase,
    ListWorldbookEntriesUseCase,
    CreateWorldbookEntryUseCase,
    GetWorldbookEntryUseCase,
    UpdateWorldbookEntryUseCase,
    DeleteWorldbookEntryUseCase,
    BatchUpdateWorldbookEntriesUseCase,
    BatchDeleteWorldbookEntriesUseCase,
    ReorderWorldbookEntriesUseCase,
  ],
})
export class WorldbooksModule {}
