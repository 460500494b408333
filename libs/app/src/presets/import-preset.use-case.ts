import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, parsePreset } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, presetsRepository, type Db, type PresetRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef, insertAssetVersion, newAssetVersionId } from './library-asset-versions';
import { PRESET_SOURCE, PRESET_DEFAULT_NAME, PRESET_SOURCE_FORMAT } from './preset-rules';

export interface ImportPresetInput {
  name?: string;
  /** The preset file (a JSON object), stored unchanged. */
  data: unknown;
}

/** `POST /import/preset`: a new preset with version 1 (`change_kind: import`) and its `import_preset` log. */
@Injectable()
export class ImportPresetUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: ImportPresetInput): Promise<PresetRow> {
    const { data } = parsePreset(input.data);
    const name = input.name ?? PRESET_DEFAULT_NAME;
    return inTransaction(this.db, async ({ tx }) => {
      const now = Date.now();
      const id = newId(ID_PREFIX.preset);
      const versionId = newAssetVersionId('preset');
      const head = {
        id,
        account_id: actor.accountId,
        name,
        source: PRESET_SOURCE,
        latest_version_id: versionId,
        version_no: 1,
        deleted_at: null,
        created_at: now,
        updated_at: now,
      };
      const log = await this.logs.write(tx, actor, {
        action: 'import_preset',
        target_type: 'preset',
        target_id: id,
        after_ref: assetRef(head),
      });
      const preset = await presetsRepository.insert(tx, head);
      await insertAssetVersion(tx, {
        id: versionId,
        accountId: actor.accountId,
        kind: 'preset',
        assetId: id,
        versionNo: 1,
        name,
        data,
        sourceFormat: PRESET_SOURCE_FORMAT,
        changeKind: 'import',
        operationId: log.id,
        now,
      });
      return preset;
    });
  }
}
