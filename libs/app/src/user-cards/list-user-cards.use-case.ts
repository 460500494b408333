import { Inject, Injectable } from '@nestjs/common';
import { offsetMeta, type OffsetMeta } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { userCardsRepository, type Db, type UserCardListQuery, type UserCardRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export type UserCardListInput = UserCardListQuery;

export interface UserCardList {
  items: UserCardRow[];
  meta: OffsetMeta & { sort_by: UserCardListQuery['sortBy']; sort_order: UserCardListQuery['sortOrder'] };
}

/**
 * `GET /users`: the caller's account's cards. Deleted cards only with `include_deleted=true` or
 * `status=deleted` (an explicit status filter is obeyed as given).
 */
@Injectable()
export class ListUserCardsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: UserCardListInput): Promise<UserCardList> {
    const { rows, total } = await userCardsRepository.list(this.db, actor.accountId, input);
    return {
      items: rows,
      meta: {
        ...offsetMeta(total, input.limit, input.offset),
        sort_by: input.sortBy,
        sort_order: input.sortOrder,
      },
    };
  }
}
