import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { presetNotFound } from './preset-rules';

/** `GET /presets/:id/versions`: version summaries, newest first. */
@Injectable()
export class ListPresetVersionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, page: { limit?: number; offset?: number }) {
    const preset = await presetsRepository.findOfAccount(this.db, actor.accountId, id);
    if (!preset) throw presetNotFound();
    const limit = page.limit ?? 50;
    const offset = page.offset ?? 0;
    return { ...(await assetVersionsRepository.listOfAsset(this.db, id, { limit, offset })), limit, offset };
  }
}
