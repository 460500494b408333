import { Inject, Injectable } from '@nestjs/common';
import type { NormalizedWorldbook } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import {
  characterLorebook,
  latestCharacterVersion,
  requireCharacter,
  requireCharacterVersion,
  storedCardOf,
  type CharacterWithVersion,
} from './character-rules';

export interface CharacterLorebook extends CharacterWithVersion {
  /** The card's `character_book` as a normalised worldbook; null when the card has none. */
  book: NormalizedWorldbook | null;
}

/**
 * `GET /characters/:id/lorebook?version_id=`: the embedded `character_book` of a version (default the
 * latest) as normalised worldbook entries, read-only, for the prompt engine and the client.
 */
@Injectable()
export class GetCharacterLorebookUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, versionId?: string): Promise<CharacterLorebook> {
    const character = await requireCharacter(this.db, actor, id);
    const version =
      versionId === undefined
        ? await latestCharacterVersion(this.db, character)
        : await requireCharacterVersion(this.db, character, versionId);
    return { character, version, book: characterLorebook(storedCardOf(version)) };
  }
}
