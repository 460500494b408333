import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  userCardsRepository,
  type Db,
  type UserCardRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  checkUserCardSnapshot,
  requireUserCardRevision,
  userCardNameConflict,
  userCardNotFound,
  userCardRef,
} from './user-card-rules';

export interface UpdateUserCardInput {
  /** Replaces the whole snapshot. */
  snapshot?: unknown;
  status?: 'active' | 'disabled';
  expected_revision?: number | null;
}

/**
 * `PATCH /users/:id`: at least one of snapshot or status. The card is locked, its revision compared
 * with `expected_revision` (409 `user_revision_conflict`), then written with `revision + 1`. A PATCH
 * that changes nothing writes nothing (same revision, no log).
 */
@Injectable()
export class UpdateUserCardUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateUserCardInput): Promise<UserCardRow> {
    requireSomeField(input, ['snapshot', 'status']);
    const snapshot = input.snapshot === undefined ? undefined : checkUserCardSnapshot(input.snapshot);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const before = await userCardsRepository.lockLive(tx, actor.accountId, id);
        if (!before) throw userCardNotFound();
        requireUserCardRevision(before, input.expected_revision);
        const status = input.status ?? before.status;
        const sameSnapshot = !snapshot || canonicalJson(snapshot.value) === canonicalJson(before.snapshot);
        if (sameSnapshot && status === before.status) return before;
        const name = snapshot?.name ?? before.name;
        if (name !== before.name && (await userCardsRepository.findLiveByName(tx, actor.accountId, name)))
          throw userCardNameConflict(name);
        const after = await userCardsRepository.update(tx, id, {
          name,
          status,
          ...(snapshot ? { snapshot: snapshot.json } : {}),
          revision: before.revision + 1,
          updated_at: Date.now(),
        });
        await this.logs.write(tx, actor, {
          action: 'update_user_card',
          target_type: 'user_card',
          target_id: id,
          before_ref: userCardRef(before),
          after_ref: userCardRef(after),
          metadata: { snapshot_changed: !sameSnapshot },
        });
        return after;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw userCardNameConflict(snapshot?.name ?? '');
      throw error;
    }
  }
}
