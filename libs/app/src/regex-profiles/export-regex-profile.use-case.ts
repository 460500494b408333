import { Inject, Injectable } from '@nestjs/common';
import { exportRegexScripts, type RegexScript } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { regexProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import {
  exportNotFound,
  readAssetVersionData,
  requireVersionOfAsset,
} from '../presets/library-asset-versions';
import { asScripts } from './regex-profile-rules';

/**
 * `GET /export/regex/:id`: the latest version's scripts as a JSON array with safe defaults for missing
 * legacy fields (`exportRegexScripts`); 404 `not_found` when missing.
 */
@Injectable()
export class ExportRegexProfileUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<{ name: string; file: RegexScript[] }> {
    const profile = await regexProfilesRepository.findOfAccount(this.db, actor.accountId, id);
    if (!profile) throw exportNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, profile.latest_version_id);
    const scripts = asScripts(await readAssetVersionData(this.db, version));
    return { name: version.name, file: exportRegexScripts(scripts) };
  }
}
