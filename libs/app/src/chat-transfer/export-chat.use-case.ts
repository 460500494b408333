import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  chatTransferRepository,
  inReadSnapshot,
  type Db,
  type Executor,
  type SessionRow,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireSession } from '../sessions/session-access';
import { buildChatExport, type ChatExportCounts } from './chat-export-builder';
import { exportRequiresAsync, type ChatExportOptions, type ChatFile } from './chat-transfer-rules';

/**
 * The session to export, readable by the caller (`project.read`). A missing or foreign session is 404
 * with `notFoundCode` (`not_found` on the download route, `session_not_found` on the job routes).
 */
export async function requireExportableSession(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  sessionId: string,
  notFoundCode: 'not_found' | 'session_not_found',
): Promise<SessionRow> {
  try {
    return (await requireSession(access, db, actor, sessionId, 'project.read')).session;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found' && notFoundCode !== 'not_found') {
      throw new DomainError(notFoundCode, 404, 'Session not found');
    }
    throw error;
  }
}

/** The `export_chat` operation log (counts only). */
export function chatExportLog(session: SessionRow, counts: ChatExportCounts, extra: Record<string, unknown>) {
  return {
    action: 'export_chat',
    account_id: session.account_id,
    workspace_id: session.workspace_id,
    project_id: session.project_id,
    session_id: session.id,
    target_type: 'session',
    target_id: session.id,
    metadata: { ...counts, ...extra },
  };
}

/**
 * `GET /export/chat/:id`: the file of the session, built at once from one snapshot (every read in one
 * REPEATABLE READ, READ ONLY transaction). Above `CHAT_EXPORT_SYNC_MAX_MESSAGES` stored messages (every
 * branch) the route answers 409 `export_requires_async`.
 */
@Injectable()
export class ExportChatUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, sessionId: string, options: ChatExportOptions): Promise<ChatFile> {
    // The session, its message count and every row of the file: one snapshot (turns may be committing).
    const { session, built } = await inReadSnapshot(this.db, async (tx) => {
      const session = await requireExportableSession(this.access, tx, actor, sessionId, 'not_found');
      const max = this.config.chatExportSyncMaxMessages;
      const count = await chatTransferRepository.countMessages(tx, session.account_id, session.id);
      if (count > max) throw exportRequiresAsync(count, max);
      return { session, built: await buildChatExport(tx, session, options) };
    });
    await this.operationLogs.write(
      this.db,
      actor,
      chatExportLog(session, built.counts, {
        include_variables: options.include_variables,
        include_memories: options.include_memories,
        async: false,
      }),
    );
    return built.file;
  }
}
