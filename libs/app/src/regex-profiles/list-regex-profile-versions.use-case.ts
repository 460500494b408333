import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, regexProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { regexProfileNotFound } from './regex-profile-rules';

/** `GET /regex-profiles/:id/versions`: version summaries, newest first. */
@Injectable()
export class ListRegexProfileVersionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, page: { limit?: number; offset?: number }) {
    const profile = await regexProfilesRepository.findOfAccount(this.db, actor.accountId, id);
    if (!profile) throw regexProfileNotFound();
    const limit = page.limit ?? 50;
    const offset = page.offset ?? 0;
    return { ...(await assetVersionsRepository.listOfAsset(this.db, id, { limit, offset })), limit, offset };
  }
}
