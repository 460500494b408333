import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inTransaction, type Db, type VariableRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { variableRef } from './variable-rules';
import { applyWrite, prepareWrite, type VariableWriteInput } from './variable-writes';

/**
 * `PUT /variables`: upsert by (account, scope, scope_id, key); `created` tells 201 from 200. The write
 * and its `variable.upsert` log (names and value size only) are one transaction.
 */
@Injectable()
export class UpsertVariableUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    input: VariableWriteInput,
  ): Promise<{ variable: VariableRow; created: boolean }> {
    const write = prepareWrite(input);
    return inTransaction(this.db, async ({ tx }) => {
      const result = await applyWrite(tx, actor.accountId, write);
      const v = result.variable;
      await this.logs.write(tx, actor, {
        action: 'variable.upsert',
        session_id: v.session_id,
        branch_id: v.branch_id,
        floor_id: v.floor_id,
        target_type: 'variable',
        target_id: v.id,
        after_ref: variableRef(v, write.bytes),
        metadata: { created: result.created },
      });
      return result;
    });
  }
}
