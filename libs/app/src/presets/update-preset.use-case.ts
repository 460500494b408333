import { Inject, Injectable } from '@nestjs/common';
import { parsePreset } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, inTransaction, presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef, insertAssetVersion, newAssetVersionId } from './library-asset-versions';
import { presetNotFound, PRESET_SOURCE_FORMAT, type PresetDetail } from './preset-rules';

export interface UpdatePresetInput {
  /** Default: the current name. */
  name?: string;
  /** The whole preset file; validated like an import. */
  data: unknown;
}

/** `PUT /presets/:id`: a new version (`change_kind: update`) holding the given file; `update_preset` log. */
@Injectable()
export class UpdatePresetUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdatePresetInput): Promise<PresetDetail> {
    const { data } = parsePreset(input.data);
    return inTransaction(this.db, async ({ tx }) => {
      const before = await presetsRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw presetNotFound();
      const now = Date.now();
      const versionNo = await assetVersionsRepository.nextVersionNo(tx, id);
      const versionId = newAssetVersionId('preset');
      const name = input.name ?? before.name;
      const log = await this.logs.write(tx, actor, {
        action: 'update_preset',
        target_type: 'preset',
        target_id: id,
        before_ref: assetRef(before),
        after_ref: assetRef({ id, name, version_no: versionNo, latest_version_id: versionId }),
      });
      const version = await insertAssetVersion(tx, {
        id: versionId,
        accountId: actor.accountId,
        kind: 'preset',
        assetId: id,
        versionNo,
        name,
        data,
        sourceFormat: PRESET_SOURCE_FORMAT,
        changeKind: 'update',
        operationId: log.id,
        now,
      });
      const preset = await presetsRepository.update(tx, id, {
        name,
        latest_version_id: versionId,
        version_no: versionNo,
        updated_at: now,
      });
      return { preset, version, data };
    });
  }
}
