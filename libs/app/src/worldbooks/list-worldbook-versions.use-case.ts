import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  worldbooksRepository,
  type AssetVersionRow,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { worldbookNotFound } from './worldbook-rules';

/** `GET /worldbooks/:id/versions`: version summaries, newest first. */
@Injectable()
export class ListWorldbookVersionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    id: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: Omit<AssetVersionRow, 'payload'>[]; total: number }> {
    const book = await worldbooksRepository.findOfAccount(this.db, actor.accountId, id);
    if (!book) throw worldbookNotFound();
    return assetVersionsRepository.listOfAsset(this.db, id, page);
  }
}
