import { Module } from '@nestjs/common';
import { RunBackupJobUseCase } from './run-backup-job.use-case';

/** The worker side of account backups: the `backup.transfer` job's work. */
@Module({
  providers: [RunBackupJobUseCase],
  exports: [RunBackupJobUseCase],
})
export class BackupWorkModule {}
