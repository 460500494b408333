import { Inject, Injectable } from '@nestjs/common';
import { inTransaction, temporaryConversationsRepository, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import type { MaintenanceScanStep } from '../jobs/maintenance-scan-step';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';

/** Conversations cleaned per scan; the rest wait for the next scan. */
export const TEMPORARY_CLEANUP_BATCH = 200;

export interface CleanupTemporaryConversationsResult {
  enabled: boolean;
  conversations: number;
  messages: number;
  accounts: number;
}

/**
 * Maintenance step (with ENABLE_RUNTIME_MAINTENANCE; switched off by
 * ENABLE_TEMPORARY_CONVERSATION_CLEANUP=false): terminal conversations with policy
 * `delete_on_finalize` or `ttl` whose terminal time + TEMPORARY_CONVERSATION_CLEANUP_GRACE_MS has
 * passed lose their bodies: message contents emptied, floor reasoning, run texts, stored run events
 * and the floors' stored prompts (copies of the messages) removed; session, floor, page and message
 * rows and their timestamps stay, and `cleaned_at` is set. `keep_for_debug` is never cleaned. One
 * `temporary_conversation.cleanup` operation log per account, counts only, in the same transaction.
 */
@Injectable()
export class CleanupTemporaryConversationsUseCase implements MaintenanceScanStep {
  readonly stepName = 'temporary_conversation_cleanup';
  private readonly logs = new OperationLogWriter();

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  run(): Promise<CleanupTemporaryConversationsResult> {
    return this.execute();
  }

  async execute(now: number = Date.now()): Promise<CleanupTemporaryConversationsResult> {
    if (!this.config.enableTemporaryConversationCleanup)
      return { enabled: false, conversations: 0, messages: 0, accounts: 0 };
    const cutoff = now - this.config.temporaryConversationCleanupGraceMs;
    return inTransaction(this.db, async ({ tx }) => {
      const due = await temporaryConversationsRepository.lockCleanupDue(tx, cutoff, TEMPORARY_CLEANUP_BATCH);
      const byAccount = new Map<string, string[]>();
      for (const row of due)
        byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), row.session_id]);
      let messages = 0;
      for (const [accountId, ids] of byAccount) {
        const counts = await temporaryConversationsRepository.cleanBodies(tx, ids, now);
        messages += counts.messages;
        await this.logs.write(tx, null, {
          action: 'temporary_conversation.cleanup',
          account_id: accountId,
          target_type: 'temporary_conversation',
          metadata: {
            conversation_count: ids.length,
            message_count: counts.messages,
            floor_count: counts.floors,
            run_count: counts.runs,
            prompt_snapshot_count: counts.prompt_snapshots,
          },
        });
      }
      return { enabled: true, conversations: due.length, messages, accounts: byAccount.size };
    });
  }
}
