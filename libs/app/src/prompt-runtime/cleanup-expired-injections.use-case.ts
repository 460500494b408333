import { Inject, Injectable } from '@nestjs/common';
import { inTransaction, promptRuntimeRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { MaintenanceScanStep } from '../jobs/maintenance-scan-step';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';

export interface CleanupExpiredInjectionsResult {
  deleted: number;
  accounts: number;
}

/** Rows deleted per scan; the rest wait for the next scan. */
export const INJECTION_CLEANUP_BATCH = 5000;

/**
 * Maintenance step: deletes persistent injections whose `expires_at` has passed (spec 2), and writes, in
 * the same transaction, one `prompt_injection.cleanup_expired` operation log per account concerned with
 * counts only (`deleted_count`, `session_count`, `session_scope_count`, `branch_scope_count`). Rows
 * locked by another worker are skipped, so parallel scans never delete or count a row twice.
 */
@Injectable()
export class CleanupExpiredInjectionsUseCase implements MaintenanceScanStep {
  readonly stepName = 'prompt_injection_cleanup';
  /**
   * Made here rather than injected: JobsModule is also used without CoreAppModule (the operators' ping),
   * and the writer holds no state.
   */
  private readonly logs = new OperationLogWriter();

  constructor(@Inject(DB) private readonly db: Db) {}

  run(): Promise<CleanupExpiredInjectionsResult> {
    return this.execute();
  }

  async execute(now: number = Date.now()): Promise<CleanupExpiredInjectionsResult> {
    return inTransaction(this.db, async ({ tx }) => {
      const deleted = await promptRuntimeRepository.deleteExpiredInjections(tx, now, INJECTION_CLEANUP_BATCH);
      const byAccount = new Map<string, typeof deleted>();
      for (const row of deleted)
        byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), row]);
      for (const [accountId, rows] of byAccount) {
        await this.logs.write(tx, null, {
          action: 'prompt_injection.cleanup_expired',
          account_id: accountId,
          target_type: 'prompt_injection',
          metadata: {
            deleted_count: rows.length,
            session_count: new Set(rows.map((r) => r.session_id)).size,
            session_scope_count: rows.filter((r) => r.scope === 'session').length,
            branch_scope_count: rows.filter((r) => r.scope === 'branch').length,
          },
        });
      }
      return { deleted: deleted.length, accounts: byAccount.size };
    });
  }
}
