import { Inject, Injectable } from '@nestjs/common';
import { validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { backupRepository, inTransaction, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { actorSnapshot, checkImportSize } from '../chat-transfer/chat-transfer-rules';
import { CreateJobUseCase } from '../jobs/create-job.use-case';
import { readBackupArtifact } from './get-backup-file.use-case';
import {
  parseAccountBackup,
  requireBackupClient,
  requireBackupJob,
  type BackupJobAccepted,
  type BackupRestoreInput,
} from './backup-rules';

/**
 * `POST /backup/jobs/restore`: only the account's default Client (403 `project_access_denied`: restored
 * sessions get Projects of their own). The body carries either the backup `document` (above
 * `CHAT_IMPORT_MAX_BYTES` serialised: 413 `import_payload_too_large`; checked at once, so a malformed
 * document is 400 `import_parse_error` / `import_unsupported_version` and nothing is written) or the
 * `export_job_id` of a succeeded backup export of the same account (404 `backup_job_not_found`, 404
 * `artifact_not_found`, 410 `artifact_expired`, and the same 413 when the file is above the limit). The document is stored with the job; the worker
 * restores it in one transaction.
 */
@Injectable()
export class RequestBackupRestoreJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly createJob: CreateJobUseCase,
  ) {}

  async execute(actor: Actor, input: BackupRestoreInput): Promise<BackupJobAccepted> {
    const hasDocument = input.document !== undefined && input.document !== null;
    const hasJob = input.export_job_id !== undefined && input.export_job_id !== null;
    if (hasDocument === hasJob) {
      throw validationError('give exactly one of document and export_job_id', {
        fields: ['document', 'export_job_id'],
      });
    }
    requireBackupClient(actor);
    let text: string;
    if (hasDocument) {
      text = JSON.stringify(input.document);
      checkImportSize(text, this.config.chatImportMaxBytes);
      parseAccountBackup(input.document);
    } else {
      const source = await requireBackupJob(this.db, actor, input.export_job_id!);
      text = (await readBackupArtifact(this.db, source)).content;
      checkImportSize(text, this.config.chatImportMaxBytes);
    }
    return inTransaction(this.db, async (uow) => {
      const { job } = await this.createJob.execute(uow, {
        name: 'backup.transfer',
        payload: { job_kind: 'restore_backup' },
        account_id: actor.accountId,
      });
      const now = Date.now();
      await backupRepository.insertJob(uow.tx, {
        id: job.id,
        account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        actor: JSON.stringify(actorSnapshot(actor)),
        job_kind: 'restore_backup',
        options: JSON.stringify({
          source: hasDocument ? 'document' : 'export_job',
          export_job_id: input.export_job_id ?? null,
          byte_count: Buffer.byteLength(text, 'utf8'),
        }),
        input_text: text,
        result: null,
        output_expires_at: null,
        created_at: now,
        updated_at: now,
      });
      return { job_id: job.id, status: 'pending', job_kind: 'restore_backup' };
    });
  }
}
