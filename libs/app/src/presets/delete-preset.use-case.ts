import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, presetsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { assetRef } from './library-asset-versions';
import { presetNotFound } from './preset-rules';

/** `DELETE /presets/:id`: a soft delete (versions stay for pinned sessions and tags); `delete_preset` log. */
@Injectable()
export class DeletePresetUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const before = await presetsRepository.lockOfAccount(tx, actor.accountId, id);
      if (!before) throw presetNotFound();
      const now = Date.now();
      await presetsRepository.update(tx, id, { deleted_at: now, updated_at: now });
      await this.logs.write(tx, actor, {
        action: 'delete_preset',
        target_type: 'preset',
        target_id: id,
        before_ref: assetRef(before),
      });
      return { id, deleted: true as const };
    });
  }
}
