import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, inTransaction, presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  assetRef,
  insertAssetVersion,
  newAssetVersionId,
  readAssetVersionBody,
  requireVersionOfAsset,
} from './library-asset-versions';
import { presetNotFound, type PresetDetail } from './preset-rules';

/**
 * `POST /presets/:id/rollback`: a new version (`change_kind: rollback`) whose name and content equal the
 * chosen version's; `rollback_preset` log with the source version in its metadata.
 */
@Injectable()
export class RollbackPresetUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<PresetDetail> {
    return inTransaction(this.db, async ({ tx }) => {
      const before = await presetsRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw presetNotFound();
      const source = await requireVersionOfAsset(tx, actor.accountId, id, versionId);
      const body = await readAssetVersionBody(tx, source);
      const now = Date.now();
      const versionNo = await assetVersionsRepository.nextVersionNo(tx, id);
      const newVersionId = newAssetVersionId('preset');
      const log = await this.logs.write(tx, actor, {
        action: 'rollback_preset',
        target_type: 'preset',
        target_id: id,
        before_ref: assetRef(before),
        after_ref: assetRef({
          id,
          name: source.name,
          version_no: versionNo,
          latest_version_id: newVersionId,
        }),
        metadata: { rollback_to: { version_id: source.id, version_no: source.version_no } },
      });
      const data: unknown = JSON.parse(body);
      const version = await insertAssetVersion(tx, {
        id: newVersionId,
        accountId: actor.accountId,
        kind: 'preset',
        assetId: id,
        versionNo,
        name: source.name,
        data,
        body,
        sourceFormat: source.source_format,
        changeKind: 'rollback',
        operationId: log.id,
        now,
      });
      const preset = await presetsRepository.update(tx, id, {
        name: source.name,
        latest_version_id: newVersionId,
        version_no: versionNo,
        updated_at: now,
      });
      return { preset, version, data };
    });
  }
}
