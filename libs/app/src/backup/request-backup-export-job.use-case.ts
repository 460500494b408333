import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { backupRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { actorSnapshot } from '../chat-transfer/chat-transfer-rules';
import { CreateJobUseCase } from '../jobs/create-job.use-case';
import { requireBackupClient, type BackupExportOptions, type BackupJobAccepted } from './backup-rules';

/**
 * `POST /backup/jobs/export`: only the account's default Client (403 `project_access_denied`: a backup
 * covers the sessions of every Project of the account); creates a `backup.transfer` ledger job whose
 * worker writes the backup document (`backup_artifacts`).
 */
@Injectable()
export class RequestBackupExportJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly createJob: CreateJobUseCase,
  ) {}

  async execute(actor: Actor, options: BackupExportOptions): Promise<BackupJobAccepted> {
    requireBackupClient(actor);
    return inTransaction(this.db, async (uow) => {
      const { job } = await this.createJob.execute(uow, {
        name: 'backup.transfer',
        payload: { job_kind: 'export_backup' },
        account_id: actor.accountId,
      });
      const now = Date.now();
      await backupRepository.insertJob(uow.tx, {
        id: job.id,
        account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        actor: JSON.stringify(actorSnapshot(actor)),
        job_kind: 'export_backup',
        options: JSON.stringify(options),
        input_text: null,
        result: null,
        output_expires_at: null,
        created_at: now,
        updated_at: now,
      });
      return { job_id: job.id, status: 'pending', job_kind: 'export_backup' };
    });
  }
}
