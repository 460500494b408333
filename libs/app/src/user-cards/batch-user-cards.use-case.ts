import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, userCardsRepository, type Db, type Tx, type UserCardRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { userCardRef } from './user-card-rules';

export interface UserCardBatchResult<A extends string> {
  index: number;
  id: string;
  action: A | 'not_found';
}

export interface UserCardBatchStatusOutcome {
  results: UserCardBatchResult<'updated'>[];
  meta: { total: number; updated: number; not_found: number; status: 'active' | 'disabled' };
}

export interface UserCardBatchDeleteOutcome {
  results: UserCardBatchResult<'deleted'>[];
  meta: { total: number; deleted: number; not_found: number };
}

/**
 * The ids (1-100, unique: checked by the DTO) resolved to the caller's live cards, locked in id order.
 * An id of another account, a deleted card or an unknown id is `not_found` and never touched.
 */
async function lockBatch(tx: Tx, actor: Actor, ids: string[]) {
  const rows = await userCardsRepository.lockLiveMany(tx, actor.accountId, ids);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * `PATCH /users/batch/status`: one transaction for the whole batch. A card already at the requested
 * status is reported `updated` but not written (no revision bump, no log); every changed card gets
 * `revision + 1` and a `batch_update_user_card_status` log, all logs of a batch sharing one
 * `operation_group_id`.
 */
@Injectable()
export class BatchUpdateUserCardStatusUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    input: { ids: string[]; status: 'active' | 'disabled' },
  ): Promise<UserCardBatchStatusOutcome> {
    return inTransaction(this.db, async ({ tx }) => {
      const found = await lockBatch(tx, actor, input.ids);
      const changing = [...found.values()].filter((card) => card.status !== input.status);
      const after = await userCardsRepository.setStatusMany(
        tx,
        changing.map((card) => card.id),
        input.status,
        Date.now(),
      );
      await writeLogs(this.logs, tx, actor, 'batch_update_user_card_status', found, after);
      const results = input.ids.map((id, index) => ({
        index,
        id,
        action: found.has(id) ? ('updated' as const) : ('not_found' as const),
      }));
      const updated = results.filter((r) => r.action === 'updated').length;
      return {
        results,
        meta: {
          total: input.ids.length,
          updated,
          not_found: input.ids.length - updated,
          status: input.status,
        },
      };
    });
  }
}

/**
 * `POST /users/batch/delete`: soft-deletes the caller's live cards among the ids in one transaction,
 * each with `revision + 1` and a `batch_delete_user_card` log (one `operation_group_id` per batch).
 */
@Injectable()
export class BatchDeleteUserCardsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: { ids: string[] }): Promise<UserCardBatchDeleteOutcome> {
    return inTransaction(this.db, async ({ tx }) => {
      const found = await lockBatch(tx, actor, input.ids);
      const after = await userCardsRepository.softDeleteMany(tx, [...found.keys()], Date.now());
      await writeLogs(this.logs, tx, actor, 'batch_delete_user_card', found, after);
      const results = input.ids.map((id, index) => ({
        index,
        id,
        action: found.has(id) ? ('deleted' as const) : ('not_found' as const),
      }));
      const deleted = results.filter((r) => r.action === 'deleted').length;
      return { results, meta: { total: input.ids.length, deleted, not_found: input.ids.length - deleted } };
    });
  }
}

async function writeLogs(
  logs: OperationLogWriter,
  tx: Tx,
  actor: Actor,
  action: string,
  before: Map<string, UserCardRow>,
  after: UserCardRow[],
): Promise<void> {
  if (after.length === 0) return;
  const group = newId(ID_PREFIX.operationGroup);
  for (const card of [...after].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const previous = before.get(card.id);
    await logs.write(tx, actor, {
      action,
      operation_group_id: group,
      target_type: 'user_card',
      target_id: card.id,
      before_ref: previous ? userCardRef(previous) : null,
      after_ref: userCardRef(card),
    });
  }
}
