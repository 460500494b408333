import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { latestCharacterVersion, requireCharacter, type CharacterWithVersion } from './character-rules';

/** `GET /characters/:id`: the character with its latest version (404 `character_not_found`). */
@Injectable()
export class GetCharacterUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<CharacterWithVersion> {
    const character = await requireCharacter(this.db, actor, id);
    return { character, version: await latestCharacterVersion(this.db, character) };
  }
}
