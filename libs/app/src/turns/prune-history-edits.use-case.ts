import { Inject, Injectable } from '@nestjs/common';
import { sessionHistoryEditsRepository, type Db, type PrunedHistoryEdits } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { MaintenanceScanStep } from '../jobs/maintenance-scan-step';

/** Sessions pruned per scan; the rest wait for the next scan. */
export const HISTORY_EDIT_PRUNE_BATCH = 1_000;

/**
 * Maintenance step: keeps `session_history_edits` at one row per edited session (a session's rows
 * are replaced by one new row, which gives it a new history revision, docs/decisions.md "Turn
 * history cache") and drops the rows of deleted sessions. Without it the table grows by a row for
 * every swipe, retry and edit forever. No operation log: nothing a user made or can see changes.
 */
@Injectable()
export class PruneHistoryEditsUseCase implements MaintenanceScanStep {
  readonly stepName = 'history_edit_prune';

  constructor(@Inject(DB) private readonly db: Db) {}

  run(): Promise<PrunedHistoryEdits> {
    return this.execute();
  }

  execute(limit: number = HISTORY_EDIT_PRUNE_BATCH): Promise<PrunedHistoryEdits> {
    return sessionHistoryEditsRepository.pruneUnneeded(this.db, limit);
  }
}
