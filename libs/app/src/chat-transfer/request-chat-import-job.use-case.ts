import { Inject, Injectable } from '@nestjs/common';
import { detectChatFormat } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { chatTransferRepository, inTransaction, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { CreateJobUseCase } from '../jobs/create-job.use-case';
import { actorSnapshot, checkImportSize, type ChatImportInput } from './chat-transfer-rules';
import { requireSessionDefaultPlacement, resolveImportBinding } from './import-chat.use-case';

export interface ChatTransferJobAccepted {
  job_id: string;
  status: 'pending';
  job_kind: 'import_chat' | 'export_chat';
  format: string | null;
  requested_session_id?: string;
}

/**
 * `POST /import/chat/jobs`: checks the body, the size limit and the character binding like the sync
 * route, stores the raw text with the job (`chat_transfer_jobs.input_text`; the queue entry carries the
 * job id only) and creates a `chat.transfer` ledger job. Parsing happens in the worker.
 */
@Injectable()
export class RequestChatImportJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly createJob: CreateJobUseCase,
  ) {}

  async execute(actor: Actor, input: ChatImportInput): Promise<ChatTransferJobAccepted> {
    checkImportSize(input.data, this.config.chatImportMaxBytes);
    const binding = await resolveImportBinding(this.db, actor.accountId, input.character_id);
    requireSessionDefaultPlacement(actor);
    const format = detectChatFormat(input.data) === 'nchat' ? 'nchat' : null;
    return inTransaction(this.db, async (uow) => {
      const { job } = await this.createJob.execute(uow, {
        name: 'chat.transfer',
        payload: { job_kind: 'import_chat' },
        account_id: actor.accountId,
      });
      const now = Date.now();
      await chatTransferRepository.insertJob(uow.tx, {
        id: job.id,
        account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        actor: JSON.stringify(actorSnapshot(actor)),
        job_kind: 'import_chat',
        format,
        requested_session_id: null,
        options: JSON.stringify({
          character_id: binding?.character_id ?? null,
          character_version_id: binding?.character_version_id ?? null,
          title: input.title ?? null,
        }),
        input_text: input.data,
        result_session_id: null,
        result: null,
        output_expires_at: null,
        created_at: now,
        updated_at: now,
      });
      return { job_id: job.id, status: 'pending', job_kind: 'import_chat', format };
    });
  }
}
