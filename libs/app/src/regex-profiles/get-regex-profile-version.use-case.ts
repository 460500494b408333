import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { regexProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readAssetVersionData, requireVersionOfAsset } from '../presets/library-asset-versions';
import { asScripts, regexProfileNotFound, type RegexProfileVersionDetail } from './regex-profile-rules';

/** `GET /regex-profiles/:id/versions/:version_id`: one version with its scripts. */
@Injectable()
export class GetRegexProfileVersionUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<RegexProfileVersionDetail> {
    const profile = await regexProfilesRepository.findOfAccount(this.db, actor.accountId, id);
    if (!profile) throw regexProfileNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, versionId);
    return { version, data: asScripts(await readAssetVersionData(this.db, version)) };
  }
}
