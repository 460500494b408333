import { Inject, Injectable } from '@nestjs/common';
import { inTransaction, temporaryConversationsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { MaintenanceScanStep } from '../jobs/maintenance-scan-step';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';

/** Conversations expired per scan; the rest wait for the next scan (or their lazy check). */
export const TEMPORARY_EXPIRY_BATCH = 1000;

/**
 * Maintenance step (with ENABLE_RUNTIME_MAINTENANCE): `active` `ttl` conversations past `expires_at`
 * move to `expired` (the same conditional update as the lazy check; rows another worker holds are
 * skipped), with one `temporary_conversation.expire` operation log per account holding counts only.
 */
@Injectable()
export class ExpireTemporaryConversationsUseCase implements MaintenanceScanStep {
  readonly stepName = 'temporary_conversation_expiry';
  /** Made here: JobsModule is also used without CoreAppModule (see CleanupExpiredInjectionsUseCase). */
  private readonly logs = new OperationLogWriter();

  constructor(@Inject(DB) private readonly db: Db) {}

  run(): Promise<{ expired: number; accounts: number }> {
    return this.execute();
  }

  async execute(now: number = Date.now()): Promise<{ expired: number; accounts: number }> {
    return inTransaction(this.db, async ({ tx }) => {
      const expired = await temporaryConversationsRepository.expireDue(tx, now, TEMPORARY_EXPIRY_BATCH);
      const byAccount = new Map<string, number>();
      for (const row of expired) byAccount.set(row.account_id, (byAccount.get(row.account_id) ?? 0) + 1);
      for (const [accountId, count] of byAccount)
        await this.logs.write(tx, null, {
          action: 'temporary_conversation.expire',
          account_id: accountId,
          target_type: 'temporary_conversation',
          metadata: { trigger: 'maintenance', expired_count: count },
        });
      return { expired: expired.length, accounts: byAccount.size };
    });
  }
}
