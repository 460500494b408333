import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, vcTagsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { vcTagNotFound, vcTagRef } from './vc-tag-rules';

/** `DELETE /vc-tags/:id`: a hard delete with its `delete_tag` log; the target is not touched. */
@Injectable()
export class DeleteVcTagUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const tag = await vcTagsRepository.deleteOfAccount(tx, actor.accountId, id);
      if (!tag) throw vcTagNotFound();
      await this.logs.write(tx, actor, {
        action: 'delete_tag',
        target_type: 'vc_tag',
        target_id: id,
        session_id: tag.session_id,
        floor_id: tag.target_type === 'floor' ? tag.target_id : null,
        before_ref: vcTagRef(tag),
        metadata: { has_metadata: tag.metadata !== null },
      });
      return { id, deleted: true as const };
    });
  }
}
