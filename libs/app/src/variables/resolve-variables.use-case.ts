import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db, VariableRow, VariableScopeName } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { checkVariableContext, loadContextLayers, type VariableContextInput } from './variable-context';
import { GLOBAL_SCOPE_ID, resolveLayers, scopeRef, type ResolvedVariable } from './variable-rules';

export interface ResolvedSnapshot {
  context: {
    account_id: string;
    session_id: string;
    branch_id: string | null;
    floor_id: string | null;
    page_id: string | null;
    global_scope_id: string;
  };
  resolved: ResolvedVariable[];
  layers?: Array<{
    scope: VariableScopeName;
    scope_id: string;
    scope_ref: { session_id: string; branch_id: string } | null;
    items: VariableRow[];
  }>;
}

/**
 * `GET /variables/resolve`: the durable values a context sees, page > floor > branch > chat > global,
 * sorted by key, each with its source; `layers` (high to low, empty ones included) with include_layers.
 * Staged writes, promotion traces and tool buffers are never part of it.
 */
@Injectable()
export class ResolveVariablesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    input: VariableContextInput & { includeLayers?: boolean },
  ): Promise<ResolvedSnapshot> {
    const ctx = await checkVariableContext(this.db, actor.accountId, input);
    const layers = await loadContextLayers(this.db, ctx);
    return {
      context: {
        account_id: ctx.accountId,
        session_id: ctx.sessionId,
        branch_id: ctx.branchId,
        floor_id: ctx.floorId,
        page_id: ctx.pageId,
        global_scope_id: GLOBAL_SCOPE_ID,
      },
      resolved: resolveLayers(layers),
      ...(input.includeLayers
        ? {
            layers: layers.map((l) => ({
              scope: l.scope,
              scope_id: l.scopeId,
              scope_ref: scopeRef(l.scope, l.scopeId),
              items: [...l.items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
            })),
          }
        : {}),
    };
  }
}
