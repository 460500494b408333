import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  backupRepository,
  type BackupArtifactRow,
  type BackupJobView,
  type Db,
  type Executor,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { artifactExpired, artifactNotFound, type ChatFile } from '../chat-transfer/chat-transfer-rules';
import { BACKUP_CONTENT_TYPE, BACKUP_FILE_EXTENSION, backupFileName, requireBackupJob } from './backup-rules';

/**
 * The stored document of a succeeded export job: a restore job, or an export not succeeded yet, is 404
 * `artifact_not_found`; after `output_expires_at` it is 410 `artifact_expired` (checked only when read).
 */
export async function readBackupArtifact(db: Executor, job: BackupJobView): Promise<BackupArtifactRow> {
  if (job.job_kind !== 'export_backup' || job.status !== 'succeeded') throw artifactNotFound();
  const artifact = await backupRepository.findArtifact(db, job.account_id, job.id);
  // A file the maintenance purge deleted after its expiry still answers 410, from the job.
  if (!artifact && job.output_expires_at !== null && Date.now() > job.output_expires_at)
    throw artifactExpired(job.output_expires_at);
  if (!artifact) throw artifactNotFound();
  if (Date.now() > artifact.expires_at) throw artifactExpired(artifact.expires_at);
  return artifact;
}

/** `GET /backup/jobs/:id/file`: the backup document as a JSON download. */
@Injectable()
export class GetBackupFileUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, jobId: string): Promise<ChatFile> {
    const job = await requireBackupJob(this.db, actor, jobId);
    const artifact = await readBackupArtifact(this.db, job);
    return {
      name: backupFileName(artifact.created_at),
      extension: BACKUP_FILE_EXTENSION,
      content_type: BACKUP_CONTENT_TYPE,
      content: artifact.content,
    };
  }
}
