import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireBackupJob, toBackupJobDetail, type BackupJobDetail } from './backup-rules';

/** `GET /backup/jobs/:id`: 404 `backup_job_not_found` for another account's or another Client's job. */
@Injectable()
export class GetBackupJobUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, jobId: string): Promise<BackupJobDetail> {
    return toBackupJobDetail(await requireBackupJob(this.db, actor, jobId));
  }
}
