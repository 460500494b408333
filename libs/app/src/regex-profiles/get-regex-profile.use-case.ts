import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { regexProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readAssetVersionData, requireVersionOfAsset } from '../presets/library-asset-versions';
import { asScripts, regexProfileNotFound, type RegexProfileDetail } from './regex-profile-rules';

/** `GET /regex-profiles/:id`: the profile with its latest version's scripts, as stored. */
@Injectable()
export class GetRegexProfileUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<RegexProfileDetail> {
    const profile = await regexProfilesRepository.findOfAccount(this.db, actor.accountId, id);
    if (!profile) throw regexProfileNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, profile.latest_version_id);
    return { profile, version, data: asScripts(await readAssetVersionData(this.db, version)) };
  }
}
