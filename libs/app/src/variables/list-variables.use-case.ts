import { Inject, Injectable } from '@nestjs/common';
import { offsetMeta, type OffsetMeta } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  variablesRepository,
  type Db,
  type VariableListPaging,
  type VariableRow,
  type VariableScopeName,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { branchScopeId, GLOBAL_SCOPE_ID, parseBranchScopeId, variableContextInvalid } from './variable-rules';
import { branchIdOfName } from './variable-writes';

export interface VariableListInput extends VariableListPaging {
  scope?: VariableScopeName;
  scopeId?: string;
  sessionId?: string;
  branchId?: string;
  key?: string;
}

export interface VariableList {
  items: VariableRow[];
  meta: OffsetMeta & { sort_by: VariableListPaging['sortBy']; sort_order: VariableListPaging['sortOrder'] };
}

/**
 * `GET /variables`: the account's variables (spec 2 "List query"). session_id and branch_id filter
 * branch variables only (400 `variable_context_invalid` without scope=branch); scope=branch without
 * filters lists every branch variable of the account. A `global` scope_id filter is normalised.
 * Variables of deleted hosts are gone with them (cascade), so they are never listed.
 */
@Injectable()
export class ListVariablesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: VariableListInput): Promise<VariableList> {
    if ((input.sessionId !== undefined || input.branchId !== undefined) && input.scope !== 'branch') {
      throw variableContextInvalid('session_id and branch_id filter only with scope=branch');
    }
    let scopeId = input.scope === 'global' && input.scopeId !== undefined ? GLOBAL_SCOPE_ID : input.scopeId;
    let branchId = input.branchId;
    // `main` names a session's default branch: filter by that branch's id.
    if (input.sessionId !== undefined && branchId !== undefined)
      branchId = await branchIdOfName(this.db, actor.accountId, input.sessionId, branchId);
    const parsed = input.scope === 'branch' && scopeId !== undefined ? parseBranchScopeId(scopeId) : null;
    if (parsed) {
      const id = await branchIdOfName(this.db, actor.accountId, parsed.sessionId, parsed.branchId);
      scopeId = branchScopeId(parsed.sessionId, id);
    }
    const { items, total } = await variablesRepository.list(
      this.db,
      actor.accountId,
      { scope: input.scope, scopeId, sessionId: input.sessionId, branchId, key: input.key },
      input,
    );
    return {
      items,
      meta: {
        ...offsetMeta(total, input.limit, input.offset),
        sort_by: input.sortBy,
        sort_order: input.sortOrder,
      },
    };
  }
}
