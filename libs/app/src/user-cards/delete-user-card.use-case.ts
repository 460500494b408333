import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, userCardsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireUserCardRevision, userCardNotFound, userCardRef } from './user-card-rules';

export interface DeletedUserCard {
  id: string;
  deleted: true;
  /** The card's revision after the delete (the delete is a change: `revision + 1`). */
  revision: number;
}

/**
 * `DELETE /users/:id`: a soft delete (status `deleted`, `deleted_at` set, the name freed), checked
 * against `expected_revision` when given. A deleted card answers 404 `not_found` afterwards.
 */
@Injectable()
export class DeleteUserCardUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    id: string,
    input: { expected_revision?: number | null },
  ): Promise<DeletedUserCard> {
    return inTransaction(this.db, async ({ tx }) => {
      const before = await userCardsRepository.lockLive(tx, actor.accountId, id);
      if (!before) throw userCardNotFound();
      requireUserCardRevision(before, input.expected_revision);
      const [after] = await userCardsRepository.softDeleteMany(tx, [id], Date.now());
      await this.logs.write(tx, actor, {
        action: 'delete_user_card',
        target_type: 'user_card',
        target_id: id,
        before_ref: userCardRef(before),
        after_ref: userCardRef(after),
      });
      return { id, deleted: true as const, revision: after.revision };
    });
  }
}
