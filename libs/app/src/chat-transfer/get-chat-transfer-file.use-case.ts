import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { chatTransferRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { artifactExpired, artifactNotFound, type ChatFile } from './chat-transfer-rules';
import { requireChatTransferJob } from './get-chat-transfer-job.use-case';

/**
 * `GET /chat-transfer-jobs/:id/file`: the file of a succeeded export job. An import job, or an export
 * not succeeded yet, is 404 `artifact_not_found`; after `output_expires_at` it is 410 `artifact_expired`
 * (the expiry is checked only here, spec 3 "Limits").
 */
@Injectable()
export class GetChatTransferFileUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, jobId: string): Promise<ChatFile> {
    const job = await requireChatTransferJob(this.db, actor, jobId);
    if (job.job_kind !== 'export_chat' || job.status !== 'succeeded') throw artifactNotFound();
    const artifact = await chatTransferRepository.findArtifact(this.db, job.account_id, job.id);
    // A file the maintenance purge deleted after its expiry still answers 410, from the job.
    if (!artifact && job.output_expires_at !== null && Date.now() > job.output_expires_at)
      throw artifactExpired(job.output_expires_at);
    if (!artifact) throw artifactNotFound();
    if (Date.now() > artifact.expires_at) throw artifactExpired(artifact.expires_at);
    return {
      name: artifact.filename_base,
      extension: artifact.extension,
      content_type: artifact.content_type,
      content: artifact.content,
    };
  }
}
