import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  userCardsRepository,
  type Db,
  type UserCardRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { checkUserCardSnapshot, userCardNameConflict, userCardRef } from './user-card-rules';

/** `POST /users`: a new active card at revision 1, with its `create_user_card` log. */
@Injectable()
export class CreateUserCardUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: { snapshot: unknown }): Promise<UserCardRow> {
    const snapshot = checkUserCardSnapshot(input.snapshot);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        if (await userCardsRepository.findLiveByName(tx, actor.accountId, snapshot.name))
          throw userCardNameConflict(snapshot.name);
        const now = Date.now();
        const card = await userCardsRepository.insert(tx, {
          id: newId(ID_PREFIX.userCard),
          account_id: actor.accountId,
          name: snapshot.name,
          status: 'active',
          snapshot: snapshot.json,
          revision: 1,
          deleted_at: null,
          created_at: now,
          updated_at: now,
        });
        await this.logs.write(tx, actor, {
          action: 'create_user_card',
          target_type: 'user_card',
          target_id: card.id,
          after_ref: userCardRef(card),
        });
        return card;
      });
    } catch (error) {
      // Two creates with one name raced past the check: the partial unique index decides.
      if (isUniqueViolation(error)) throw userCardNameConflict(snapshot.name);
      throw error;
    }
  }
}
