import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, regexProfilesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef } from '../presets/library-asset-versions';
import { regexProfileNotFound } from './regex-profile-rules';

/** `DELETE /regex-profiles/:id`: a soft delete (versions stay); `delete_regex_profile` log. */
@Injectable()
export class DeleteRegexProfileUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const before = await regexProfilesRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw regexProfileNotFound();
      const now = Date.now();
      await regexProfilesRepository.update(tx, id, { deleted_at: now, updated_at: now });
      await this.logs.write(tx, actor, {
        action: 'delete_regex_profile',
        target_type: 'regex_profile',
        target_id: id,
        before_ref: assetRef(before),
      });
      return { id, deleted: true as const };
    });
  }
}
