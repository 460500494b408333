import { Inject, Injectable } from '@nestjs/common';
import { checkRegexImportScripts, parseRegexScripts } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  inTransaction,
  regexProfilesRepository,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef, insertAssetVersion, newAssetVersionId } from '../presets/library-asset-versions';
import {
  regexProfileNotFound,
  regexProfileStats,
  REGEX_SOURCE_FORMAT,
  type RegexProfileDetail,
} from './regex-profile-rules';

export interface UpdateRegexProfileInput {
  /** Default: the current name. */
  name?: string;
  /** The whole script list (or one script); validated like an import. */
  data: unknown;
}

/**
 * `PUT /regex-profiles/:id`: a new version (`change_kind: update`); `update_regex_profile` log. `data` is
 * checked like an import file (`checkRegexImportScripts`, `parseRegexScripts`).
 */
@Injectable()
export class UpdateRegexProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateRegexProfileInput): Promise<RegexProfileDetail> {
    // The import's bounds (script count, pattern size), same 400 `import_parse_error` as a bad script.
    checkRegexImportScripts(input.data);
    const scripts = parseRegexScripts(input.data);
    const stats = regexProfileStats(scripts);
    return inTransaction(this.db, async ({ tx }) => {
      const before = await regexProfilesRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw regexProfileNotFound();
      const now = Date.now();
      const versionNo = await assetVersionsRepository.nextVersionNo(tx, id);
      const versionId = newAssetVersionId('regex_profile');
      const name = input.name ?? before.name;
      const log = await this.logs.write(tx, actor, {
        action: 'update_regex_profile',
        target_type: 'regex_profile',
        target_id: id,
        before_ref: assetRef(before),
        after_ref: assetRef({ id, name, version_no: versionNo, latest_version_id: versionId }),
      });
      const version = await insertAssetVersion(tx, {
        id: versionId,
        accountId: actor.accountId,
        kind: 'regex_profile',
        assetId: id,
        versionNo,
        name,
        data: scripts,
        sourceFormat: REGEX_SOURCE_FORMAT,
        changeKind: 'update',
        operationId: log.id,
        now,
      });
      const profile = await regexProfilesRepository.update(tx, id, {
        name,
        latest_version_id: versionId,
        version_no: versionNo,
        script_count: stats.script_count,
        compat_report: JSON.stringify(stats.compat_report),
        updated_at: now,
      });
      return { profile, version, data: scripts };
    });
  }
}
