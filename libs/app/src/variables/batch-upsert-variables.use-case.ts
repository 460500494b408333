import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, type Db, type VariableRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import type { HostCache } from './variable-hosts';
import { requireUniqueTargets, VARIABLE_BATCH_MAX_ITEMS, variableRef } from './variable-rules';
import { applyWrite, canonicalWrites, prepareWrite, type VariableWriteInput } from './variable-writes';

export interface VariableBatchResult {
  results: Array<{ index: number; action: 'created' | 'updated'; data: VariableRow }>;
  meta: { total: number; created: number; updated: number };
}

/**
 * `PUT /variables/batch`: 1-100 writes with unique normalised (scope, scope_id, key), all checked before
 * anything is written and applied in one transaction, so one failing item (its `index` in the error's
 * details) leaves nothing written. One `variable.batch_upsert` log row per item, one operation group.
 */
@Injectable()
export class BatchUpsertVariablesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, items: VariableWriteInput[]): Promise<VariableBatchResult> {
    if (items.length < 1 || items.length > VARIABLE_BATCH_MAX_ITEMS) {
      throw validationError(`items must hold 1-${VARIABLE_BATCH_MAX_ITEMS} writes`, {
        fields: [{ field: 'items', problems: [`items must hold 1-${VARIABLE_BATCH_MAX_ITEMS} writes`] }],
      });
    }
    const prepared = items.map((item, index) => prepareWrite(item, index));
    requireUniqueTargets(prepared);
    return inTransaction(this.db, async ({ tx }) => {
      // A branch named `main` and the same branch by id are one target.
      const writes = await canonicalWrites(tx, actor.accountId, prepared);
      requireUniqueTargets(writes);
      const cache: HostCache = new Map();
      const groupId = newId(ID_PREFIX.operationGroup);
      const now = Date.now();
      const results: VariableBatchResult['results'] = [];
      for (const [index, write] of writes.entries()) {
        const { variable, created } = await applyWrite(tx, actor.accountId, write, { index, cache, now });
        results.push({ index, action: created ? 'created' : 'updated', data: variable });
        await this.logs.write(tx, actor, {
          action: 'variable.batch_upsert',
          session_id: variable.session_id,
          branch_id: variable.branch_id,
          floor_id: variable.floor_id,
          target_type: 'variable',
          target_id: variable.id,
          after_ref: variableRef(variable, write.bytes),
          metadata: { created, index, total: writes.length },
          operation_group_id: groupId,
        });
      }
      const created = results.filter((r) => r.action === 'created').length;
      return { results, meta: { total: results.length, created, updated: results.length - created } };
    });
  }
}
