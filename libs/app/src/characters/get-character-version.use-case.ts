import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireCharacter, requireCharacterVersion, type CharacterWithVersion } from './character-rules';

/** `GET /characters/:id/versions/:version_id`: one version with its card (404 `asset_version_not_found`). */
@Injectable()
export class GetCharacterVersionUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<CharacterWithVersion> {
    const character = await requireCharacter(this.db, actor, id);
    return { character, version: await requireCharacterVersion(this.db, character, versionId) };
  }
}
