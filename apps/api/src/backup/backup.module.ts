import { Module } from '@nestjs/common';
import {
  GetBackupFileUseCase,
  GetBackupJobUseCase,
  JobsModule,
  RequestBackupExportJobUseCase,
  RequestBackupRestoreJobUseCase,
} from '@hearth/app';
import { BackupController } from './backup.controller';

/** `POST /backup/jobs/export`, `POST /backup/jobs/restore`, `GET /backup/jobs/:id[/file]`. */
@Module({
  imports: [JobsModule.register()],
  controllers: [BackupController],
  providers: [
    RequestBackupExportJobUseCase,
    RequestBackupRestoreJobUseCase,
    GetBackupJobUseCase,
    GetBackupFileUseCase,
  ],
})
export class BackupModule {}
