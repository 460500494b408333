import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  chatTransferRepository,
  inReadSnapshot,
  inTransaction,
  type ChatTransferJobRow,
  type Db,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { buildChatExport } from './chat-export-builder';
import { CHAT_FORMATS, type ChatExportOptions, type ChatFormat } from './chat-transfer-rules';
import { chatExportLog, requireExportableSession } from './export-chat.use-case';
import { importChatInTransaction, parseChatFile, type ChatImportBinding } from './import-chat.use-case';

/**
 * The `chat.transfer` job (worker): an import parses the stored text and publishes the session in one
 * transaction; an export builds the file from one snapshot (every read in one REPEATABLE READ, READ ONLY
 * transaction) and stores it with `output_expires_at = now + CHAT_EXPORT_ARTIFACT_TTL_MS`. Both act as
 * the Client that asked. A rule failure (parse error, session gone) is a `DomainError` below 500, so the
 * job goes straight to `dead_letter` with the error on it. Idempotent: the job row is locked and an
 * import that already published returns its stored result. The ledger (claim, lease, retries) is
 * `RunLedgerJobUseCase`, which the processor wraps around this.
 */
@Injectable()
export class RunChatTransferJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
  ) {}

  /** The work of one attempt (the processor runs it under the ledger); its return value is the job's result. */
  async execute(jobId: string): Promise<unknown> {
    const job = await chatTransferRepository.findJobRow(this.db, jobId);
    if (!job)
      throw new DomainError('chat_transfer_job_not_found', 404, `chat transfer job ${jobId} has no row`);
    const actor = job.actor as Actor;
    return job.job_kind === 'import_chat' ? this.importChat(job, actor) : this.exportChat(job, actor);
  }

  private async importChat(job: ChatTransferJobRow, actor: Actor): Promise<unknown> {
    if (job.result_session_id !== null) return job.result;
    if (job.input_text === null) throw new DomainError('import_empty', 400, 'the job has no chat text');
    const file = parseChatFile(job.input_text);
    const options = job.options as {
      character_id?: string | null;
      character_version_id?: string | null;
      title?: string | null;
    };
    const binding: ChatImportBinding | null =
      options.character_id && options.character_version_id
        ? { character_id: options.character_id, character_version_id: options.character_version_id }
        : null;
    return inTransaction(this.db, async ({ tx }) => {
      const locked = await chatTransferRepository.lockJob(tx, job.id);
      if (!locked)
        throw new DomainError('chat_transfer_job_not_found', 404, `chat transfer job ${job.id} has no row`);
      if (locked.result_session_id !== null) return locked.result;
      const result = await importChatInTransaction(
        tx,
        actor,
        file,
        { binding, title: options.title, async: true },
        { access: this.access, operationLogs: this.operationLogs },
      );
      await chatTransferRepository.setImportResult(tx, job.id, result.session_id, result, Date.now());
      return result;
    });
  }

  private async exportChat(job: ChatTransferJobRow, actor: Actor): Promise<unknown> {
    const stored = job.options as { include_variables?: boolean; include_memories?: boolean };
    const format: ChatFormat = CHAT_FORMATS.includes(job.format as ChatFormat)
      ? (job.format as ChatFormat)
      : 'nchat';
    const options: ChatExportOptions = {
      format,
      include_variables: stored.include_variables ?? true,
      include_memories: stored.include_memories ?? true,
    };
    // The session and every row of the file: one snapshot (turns may be committing meanwhile).
    const { session, built } = await inReadSnapshot(this.db, async (tx) => {
      const session = await requireExportableSession(
        this.access,
        tx,
        actor,
        job.requested_session_id ?? '',
        'session_not_found',
      );
      return { session, built: await buildChatExport(tx, session, options) };
    });
    const now = Date.now();
    const expiresAt = now + this.config.chatExportArtifactTtlMs;
    const result = {
      session_id: session.id,
      filename: `${built.file.name}${built.file.extension}`,
      ...built.counts,
    };
    await inTransaction(this.db, async ({ tx }) => {
      await chatTransferRepository.saveArtifact(
        tx,
        {
          job_id: job.id,
          account_id: job.account_id,
          filename_base: built.file.name,
          extension: built.file.extension,
          content_type: built.file.content_type,
          content: built.file.content,
          byte_count: built.counts.byte_count,
          created_at: now,
          expires_at: expiresAt,
        },
        result,
        now,
      );
      await this.operationLogs.write(tx, actor, {
        ...chatExportLog(session, built.counts, { ...options, async: true, job_id: job.id }),
        source_type: 'job',
      });
    });
    return result;
  }
}
