import { Inject, Injectable } from '@nestjs/common';
import { checkRegexImportScripts, ID_PREFIX, newId, parseRegexScripts } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, regexProfilesRepository, type Db, type RegexProfileRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef, insertAssetVersion, newAssetVersionId } from '../presets/library-asset-versions';

import {
  defaultRegexProfileName,
  REGEX_PROFILE_SOURCE,
  regexProfileStats,
  REGEX_SOURCE_FORMAT,
} from './regex-profile-rules';

export interface ImportRegexProfileInput {
  name?: string;
  /** One script object or an array of them; stored as an array. */
  data: unknown;
}

/** `POST /import/regex`: a new regex profile with version 1 and its `import_regex_profile` log. */
@Injectable()
export class ImportRegexProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: ImportRegexProfileInput): Promise<RegexProfileRow> {
    checkRegexImportScripts(input.data);
    const scripts = parseRegexScripts(input.data);
    const name = input.name ?? defaultRegexProfileName(scripts);
    const stats = regexProfileStats(scripts);
    return inTransaction(this.db, async ({ tx }) => {
      const now = Date.now();
      const id = newId(ID_PREFIX.regexProfile);
      const versionId = newAssetVersionId('regex_profile');
      const head = {
        id,
        account_id: actor.accountId,
        name,
        source: REGEX_PROFILE_SOURCE,
        latest_version_id: versionId,
        version_no: 1,
        script_count: stats.script_count,
        compat_report: JSON.stringify(stats.compat_report),
        deleted_at: null,
        created_at: now,
        updated_at: now,
      };
      const log = await this.logs.write(tx, actor, {
        action: 'import_regex_profile',
        target_type: 'regex_profile',
        target_id: id,
        after_ref: assetRef(head),
      });
      const profile = await regexProfilesRepository.insert(tx, head);
      await insertAssetVersion(tx, {
        id: versionId,
        accountId: actor.accountId,
        kind: 'regex_profile',
        assetId: id,
        versionNo: 1,
        name,
        data: scripts,
        sourceFormat: REGEX_SOURCE_FORMAT,
        changeKind: 'import',
        operationId: log.id,
        now,
      });
      return profile;
    });
  }
}
