import { Inject, Injectable } from '@nestjs/common';
import { exportPreset, isPlainObject, type JsonObject } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { exportNotFound, readAssetVersionData, requireVersionOfAsset } from './library-asset-versions';

/** `GET /export/preset/:id`: the latest version's file, unchanged from import; 404 `not_found` when missing. */
@Injectable()
export class ExportPresetUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<{ name: string; file: JsonObject }> {
    const preset = await presetsRepository.findOfAccount(this.db, actor.accountId, id);
    if (!preset) throw exportNotFound();
    const version = await requireVersionOfAsset(this.db, actor.accountId, id, preset.latest_version_id);
    const data = await readAssetVersionData(this.db, version);
    return { name: version.name, file: exportPreset(isPlainObject(data) ? data : {}) };
  }
}
