import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { chatTransferRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { CreateJobUseCase } from '../jobs/create-job.use-case';
import { actorSnapshot, type ChatExportOptions } from './chat-transfer-rules';
import { requireExportableSession } from './export-chat.use-case';
import type { ChatTransferJobAccepted } from './request-chat-import-job.use-case';

/**
 * `POST /export/chat/:id/jobs`: the session must be readable (404 `session_not_found`); creates a
 * `chat.transfer` ledger job whose worker writes the file (`chat_transfer_artifacts`). No message limit.
 */
@Injectable()
export class RequestChatExportJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly createJob: CreateJobUseCase,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    options: ChatExportOptions,
  ): Promise<ChatTransferJobAccepted> {
    const session = await requireExportableSession(
      this.access,
      this.db,
      actor,
      sessionId,
      'session_not_found',
    );
    return inTransaction(this.db, async (uow) => {
      const { job } = await this.createJob.execute(uow, {
        name: 'chat.transfer',
        payload: { job_kind: 'export_chat', session_id: session.id },
        account_id: actor.accountId,
        workspace_id: session.workspace_id,
        project_id: session.project_id,
      });
      const now = Date.now();
      await chatTransferRepository.insertJob(uow.tx, {
        id: job.id,
        account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        actor: JSON.stringify(actorSnapshot(actor)),
        job_kind: 'export_chat',
        format: options.format,
        requested_session_id: session.id,
        options: JSON.stringify({
          include_variables: options.include_variables,
          include_memories: options.include_memories,
        }),
        input_text: null,
        result_session_id: null,
        result: null,
        output_expires_at: null,
        created_at: now,
        updated_at: now,
      });
      return {
        job_id: job.id,
        status: 'pending',
        job_kind: 'export_chat',
        format: options.format,
        requested_session_id: session.id,
      };
    });
  }
}
