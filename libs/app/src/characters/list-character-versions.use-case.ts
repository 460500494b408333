import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, type AssetVersionRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireCharacter } from './character-rules';

/** `GET /characters/:id/versions`: version summaries, newest first. */
@Injectable()
export class ListCharacterVersionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    id: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: Omit<AssetVersionRow, 'payload'>[]; total: number }> {
    const character = await requireCharacter(this.db, actor, id);
    return assetVersionsRepository.listOfAsset(this.db, character.id, { ...page, order: 'desc' });
  }
}
