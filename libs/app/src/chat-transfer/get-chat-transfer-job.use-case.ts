import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  chatTransferRepository,
  type ChatTransferJobView,
  type Db,
  type Executor,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { chatTransferJobNotFound, toJobDetail, type ChatTransferJobDetail } from './chat-transfer-rules';

/**
 * A chat transfer job the caller may see: one of its account, created by this Client or seen by the
 * account's default Client; anything else is 404 `chat_transfer_job_not_found` (never its data).
 */
export async function requireChatTransferJob(
  db: Executor,
  actor: Actor,
  jobId: string,
): Promise<ChatTransferJobView> {
  const job = await chatTransferRepository.findJob(db, actor.accountId, jobId);
  if (!job || (!actor.clientIsDefault && job.created_by_client_id !== actor.clientId)) {
    throw chatTransferJobNotFound();
  }
  return job;
}

/** `GET /chat-transfer-jobs/:id`. */
@Injectable()
export class GetChatTransferJobUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, jobId: string): Promise<ChatTransferJobDetail> {
    return toJobDetail(await requireChatTransferJob(this.db, actor, jobId));
  }
}
