import { Inject, Injectable } from '@nestjs/common';
import { decideInboxEntry, inboxDecisionReason, type InboxDecision } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inboxRepository, inTransaction, type Db, type InboxEntryRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { InboxAccess, inboxEntryNotFound } from './inbox-access';
import { InboxJournal } from './inbox-journal';

export interface DecideInboxEntryInput {
  /** Absent or null: no reason; otherwise 1-2000 characters. */
  reason?: string | null;
}

/**
 * `POST /projects/:id/inbox/:entry_id/accept` and `/reject` (owner only): a `pending` entry is decided
 * once (409 `inbox_entry_already_decided` afterwards). Accepting records the decision and nothing
 * else: nothing is merged into a session (spec 1). The entry, its operation log and its Project event
 * are written in one transaction.
 */
@Injectable()
export class DecideInboxEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: InboxAccess,
    private readonly journal: InboxJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    entryId: string,
    decision: InboxDecision,
    input: DecideInboxEntryInput,
  ): Promise<InboxEntryRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.inbox.decide', uow.tx);
      const reason = inboxDecisionReason(input.reason);
      const entry = await inboxRepository.findInProjectForUpdate(uow.tx, project.id, entryId);
      if (!entry) throw inboxEntryNotFound();
      const status = decideInboxEntry(entry.status, decision);
      const decided = await inboxRepository.decide(uow.tx, entry.id, {
        status,
        decision_reason: reason,
        decided_by_account_id: actor.accountId,
        decided_by_client_id: actor.clientId,
        decided_at: Date.now(),
      });
      // The row is locked and pending, so the conditional update always applies.
      if (!decided) throw new Error(`inbox entry ${entry.id} changed while locked`);
      await this.journal.record(uow, actor, project, 'decide', decided);
      return decided;
    });
  }
}
