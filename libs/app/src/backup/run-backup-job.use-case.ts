import { Inject, Injectable } from '@nestjs/common';
import { DomainError, parseJsonText } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  backupRepository,
  inReadSnapshot,
  inTransaction,
  type BackupJobRow,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { buildBackupDocument } from './backup-export-builder';
import { restoreBackupInTransaction } from './backup-restore-writer';
import { parseAccountBackup, type BackupExportOptions } from './backup-rules';

const jobGone = (id: string) => new DomainError('backup_job_not_found', 404, `backup job ${id} has no row`);

/**
 * The `backup.transfer` job (worker), acting as the Client that asked. An export builds the account's
 * backup document from one snapshot of the database (every read in one REPEATABLE READ transaction) and stores it with `output_expires_at = now + CHAT_EXPORT_ARTIFACT_TTL_MS` (a retry
 * replaces the file) and logs `export_backup`. A restore parses the stored document and writes
 * everything, its `restore_backup` log and the job's result in ONE transaction, so a failure leaves
 * nothing; the job row is locked and a restore that already committed returns its stored result. A
 * document that does not parse is a `DomainError` below 500: straight to `dead_letter`.
 */
@Injectable()
export class RunBackupJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
  ) {}

  async execute(jobId: string): Promise<unknown> {
    const job = await backupRepository.findJobRow(this.db, jobId);
    if (!job) throw jobGone(jobId);
    const actor = job.actor as Actor;
    return job.job_kind === 'export_backup' ? this.exportBackup(job, actor) : this.restoreBackup(job, actor);
  }

  private async exportBackup(job: BackupJobRow, actor: Actor): Promise<unknown> {
    const options = job.options as BackupExportOptions;
    const built = await inReadSnapshot(this.db, (tx) => buildBackupDocument(tx, job.account_id, options));
    const now = Date.now();
    const expiresAt = now + this.config.chatExportArtifactTtlMs;
    const result = { byte_count: built.byte_count, counts: built.counts };
    await inTransaction(this.db, async ({ tx }) => {
      await backupRepository.saveArtifact(
        tx,
        {
          job_id: job.id,
          account_id: job.account_id,
          content: built.content,
          byte_count: built.byte_count,
          created_at: now,
          expires_at: expiresAt,
        },
        result,
        now,
      );
      await this.operationLogs.write(tx, actor, {
        action: 'export_backup',
        account_id: job.account_id,
        target_type: 'backup_job',
        target_id: job.id,
        source_type: 'job',
        metadata: { ...options, ...built.counts, byte_count: built.byte_count },
      });
    });
    return result;
  }

  private async restoreBackup(job: BackupJobRow, actor: Actor): Promise<unknown> {
    if (job.restored) return job.result;
    if (job.input_text === null) throw new DomainError('import_empty', 400, 'the job has no backup document');
    const parsed = parseAccountBackup(parseJsonText(job.input_text, 'the backup document'));
    return inTransaction(this.db, async ({ tx }) => {
      const locked = await backupRepository.lockJob(tx, job.id);
      if (!locked) throw jobGone(job.id);
      if (locked.restored) return locked.result;
      const result = await restoreBackupInTransaction(tx, actor, parsed, job.id, {
        access: this.access,
        operationLogs: this.operationLogs,
        clientDataLimits: {
          maxItems: this.config.clientData.accountMaxItems,
          maxBytes: this.config.clientData.accountMaxBytes,
        },
      });
      await this.operationLogs.write(tx, actor, {
        action: 'restore_backup',
        account_id: job.account_id,
        target_type: 'backup_job',
        target_id: job.id,
        source_type: 'job',
        metadata: {
          ...result.counts,
          renamed_vc_tags: result.renamed.vc_tags.length,
          renamed_user_cards: result.renamed.user_cards.length,
          source_spec_version: parsed.document.spec_version,
          source_exported_at: parsed.document.exported_at,
        },
      });
      await backupRepository.setRestoreResult(tx, job.id, result, Date.now());
      return result;
    });
  }
}
