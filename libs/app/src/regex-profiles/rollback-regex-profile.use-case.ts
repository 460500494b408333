import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  inTransaction,
  regexProfilesRepository,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  assetRef,
  insertAssetVersion,
  newAssetVersionId,
  readAssetVersionBody,
  requireVersionOfAsset,
} from '../presets/library-asset-versions';
import {
  asScripts,
  regexProfileNotFound,
  regexProfileStats,
  type RegexProfileDetail,
} from './regex-profile-rules';

/**
 * `POST /regex-profiles/:id/rollback`: a new version (`change_kind: rollback`) whose name and scripts
 * equal the chosen version's; `rollback_regex_profile` log with the source version in its metadata.
 */
@Injectable()
export class RollbackRegexProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, versionId: string): Promise<RegexProfileDetail> {
    return inTransaction(this.db, async ({ tx }) => {
      const before = await regexProfilesRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw regexProfileNotFound();
      const source = await requireVersionOfAsset(tx, actor.accountId, id, versionId);
      const body = await readAssetVersionBody(tx, source);
      const scripts = asScripts(JSON.parse(body));
      const stats = regexProfileStats(scripts);
      const now = Date.now();
      const versionNo = await assetVersionsRepository.nextVersionNo(tx, id);
      const newVersionId = newAssetVersionId('regex_profile');
      const log = await this.logs.write(tx, actor, {
        action: 'rollback_regex_profile',
        target_type: 'regex_profile',
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
      const version = await insertAssetVersion(tx, {
        id: newVersionId,
        accountId: actor.accountId,
        kind: 'regex_profile',
        assetId: id,
        versionNo,
        name: source.name,
        data: scripts,
        body,
        sourceFormat: source.source_format,
        changeKind: 'rollback',
        operationId: log.id,
        now,
      });
      const profile = await regexProfilesRepository.update(tx, id, {
        name: source.name,
        latest_version_id: newVersionId,
        version_no: versionNo,
        script_count: stats.script_count,
        compat_report: JSON.stringify(stats.compat_report),
        updated_at: now,
      });
      return { profile, version, data: scripts };
    });
  }
}
