import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, variablesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireUnlockedForDelete } from './variable-hosts';
import { variableNotFound, variableRef } from './variable-rules';

/**
 * `DELETE /variables/:id`: deletes a variable of the caller's account with its `variable.delete` log.
 * Floor and page variables of a `generating` or `committed` floor are locked (409
 * `variable_target_locked`). An id the account once had (deleted before, or cleaned with its host: a
 * historical orphan) is still accepted and writes nothing; an unknown id or another account's is 404
 * `variable_not_found`.
 */
@Injectable()
export class DeleteVariableUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    return inTransaction(this.db, async ({ tx }) => {
      const variable = await variablesRepository.lockById(tx, actor.accountId, id);
      if (!variable) {
        if (await variablesRepository.hasTombstone(tx, actor.accountId, id))
          return { id, deleted: true as const };
        throw variableNotFound();
      }
      await requireUnlockedForDelete(tx, actor.accountId, variable);
      await variablesRepository.delete(tx, id);
      await this.logs.write(tx, actor, {
        action: 'variable.delete',
        session_id: variable.session_id,
        branch_id: variable.branch_id,
        floor_id: variable.floor_id,
        target_type: 'variable',
        target_id: id,
        before_ref: variableRef(variable),
      });
      return { id, deleted: true as const };
    });
  }
}
