import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { userCardsRepository, type Db, type UserCardRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { userCardNotFound } from './user-card-rules';

/** `GET /users/:id`: a live card of the caller's account, else 404 `not_found`. */
@Injectable()
export class GetUserCardUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<UserCardRow> {
    const card = await userCardsRepository.findLive(this.db, actor.accountId, id);
    if (!card) throw userCardNotFound();
    return card;
  }
}
