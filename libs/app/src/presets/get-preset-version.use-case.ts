import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readAssetVersionData, requireVersionOfAsset } from './library-asset-versions';
import { presetNotFound, type PresetVersionDetail } from './preset-rules';

/** `GET /presets/:id/versions/:version_id`: one version with its file. */
@Injectable()
export class GetPresetVersionUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<PresetVersionDetail> {
    const preset = await presetsRepository.findOfAccount(this.db, actor.accountId, id);
    if (!preset) throw presetNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, versionId);
    return { version, data: await readAssetVersionData(this.db, version) };
  }
}
