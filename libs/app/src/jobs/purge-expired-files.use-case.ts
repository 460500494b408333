import { Inject, Injectable } from '@nestjs/common';
import { expiredFilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { MaintenanceScanStep } from './maintenance-scan-step';

/** Files deleted per kind and scan; the rest go at the next scan. */
export const EXPIRED_FILES_BATCH = 500;

/**
 * Maintenance step (with ENABLE_RUNTIME_MAINTENANCE): deletes chat export and backup files whose
 * `CHAT_EXPORT_ARTIFACT_TTL_MS` has passed. They can no longer be downloaded (410 `artifact_expired`,
 * answered from the job's `output_expires_at` once the file is gone), so keeping them only grows the
 * database. The jobs stay. Safe on several workers at once (rows another worker is deleting are
 * skipped).
 */
@Injectable()
export class PurgeExpiredFilesUseCase implements MaintenanceScanStep {
  readonly stepName = 'expired_files';

  constructor(@Inject(DB) private readonly db: Db) {}

  run(): Promise<{ chat_files: number; backup_files: number }> {
    return this.execute();
  }

  async execute(now: number = Date.now()): Promise<{ chat_files: number; backup_files: number }> {
    const chat_files = await expiredFilesRepository.deleteExpired(
      this.db,
      'chat_transfer_artifacts',
      now,
      EXPIRED_FILES_BATCH,
    );
    const backup_files = await expiredFilesRepository.deleteExpired(
      this.db,
      'backup_artifacts',
      now,
      EXPIRED_FILES_BATCH,
    );
    return { chat_files, backup_files };
  }
}
