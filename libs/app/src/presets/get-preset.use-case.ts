import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readAssetVersionData, requireVersionOfAsset } from './library-asset-versions';
import { presetNotFound, type PresetDetail } from './preset-rules';

/** `GET /presets/:id`: the preset with its latest version's file. */
@Injectable()
export class GetPresetUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<PresetDetail> {
    const preset = await presetsRepository.findOfAccount(this.db, actor.accountId, id);
    if (!preset) throw presetNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, preset.latest_version_id);
    return { preset, version, data: await readAssetVersionData(this.db, version) };
  }
}
