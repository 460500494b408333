import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { charactersRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { characterNotFound, characterRef } from './character-rules';

/**
 * `DELETE /characters/:id`: a soft delete (`deleted_at`). The versions stay, so sessions pinned to one and
 * tags on one keep working; every character route then answers 404, a second DELETE too.
 */
@Injectable()
export class DeleteCharacterUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const character = await charactersRepository.lockOfAccount(tx, actor.accountId, id);
      if (!character) throw characterNotFound();
      const now = Date.now();
      await charactersRepository.update(tx, id, { deleted_at: now, updated_at: now });
      await this.logs.write(tx, actor, {
        action: 'delete_character',
        target_type: 'character',
        target_id: id,
        before_ref: characterRef(character),
      });
      return { id, deleted: true as const };
    });
  }
}
