import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  charactersRepository,
  type CharacterListQuery,
  type CharacterRow,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';

/** `GET /characters`: the live characters of the caller's account (summaries, no cards). */
@Injectable()
export class ListCharactersUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, query: CharacterListQuery): Promise<{ rows: CharacterRow[]; total: number }> {
    return charactersRepository.list(this.db, actor.accountId, query);
  }
}
