import {
  conversationRepository,
  variablesRepository,
  type Executor,
  type FloorRow,
  type VariableRow,
  type VariableScopeName,
} from '@hearth/persistence';
import { isInLineage } from '../conversation/floor-reads';
import {
  branchScopeId,
  GLOBAL_SCOPE_ID,
  variableContextInvalid,
  variableHostNotFound,
  type VariableLayer,
} from './variable-rules';
import { branchIdOfName } from './variable-writes';

export interface VariableContextInput {
  sessionId: string;
  branchId?: string | null;
  floorId?: string | null;
  pageId?: string | null;
}

/** A checked resolve context: every id exists in the account and they agree. */
export interface VariableContext {
  accountId: string;
  sessionId: string;
  branchId: string | null;
  floorId: string | null;
  pageId: string | null;
}

/**
 * Checks a resolve context (spec 2 "Resolve query"). Every host must exist in the account (404
 * `variable_host_not_found`). A page implies its floor, a floor its branch; an explicit floor_id must
 * be the page's floor and an explicit branch_id must agree with the floor: the floor's own branch or a
 * branch whose history holds it (a branch made from a later floor). Disagreement, or a host of another
 * session: 400 `variable_context_invalid`.
 */
export async function checkVariableContext(
  db: Executor,
  accountId: string,
  input: VariableContextInput,
): Promise<VariableContext> {
  const session = await variablesRepository.findSession(db, accountId, input.sessionId);
  if (!session) throw variableHostNotFound('chat', input.sessionId);
  let floorId = input.floorId ?? null;
  const pageId = input.pageId ?? null;
  if (pageId) {
    const page = await variablesRepository.findPage(db, accountId, pageId);
    if (!page) throw variableHostNotFound('page', pageId);
    if (page.session_id !== session.id)
      throw variableContextInvalid('page_id is not a page of the session', { page_id: pageId });
    if (floorId && floorId !== page.floor_id)
      throw variableContextInvalid('floor_id does not agree with the page', {
        floor_id: floorId,
        page_floor_id: page.floor_id,
      });
    floorId = page.floor_id;
  }
  let floor: FloorRow | undefined;
  if (floorId) {
    floor = await variablesRepository.findFloor(db, accountId, floorId);
    if (!floor) throw variableHostNotFound('floor', floorId);
    if (floor.session_id !== session.id)
      throw variableContextInvalid('floor_id is not a floor of the session', { floor_id: floorId });
  }
  // `main` names the session's default branch.
  let branchId = input.branchId ? await branchIdOfName(db, accountId, session.id, input.branchId) : null;
  if (branchId) {
    const branch = await variablesRepository.findBranch(db, accountId, session.id, branchId);
    if (!branch) {
      // A branch of another session of the account disagrees with the context, as a floor would (400);
      // a missing one, or another account's, is not found.
      const elsewhere = await conversationRepository.findBranch(db, branchId);
      if (elsewhere?.account_id === accountId)
        throw variableContextInvalid('branch_id is not a branch of the session', { branch_id: branchId });
      throw variableHostNotFound('branch', branchScopeId(session.id, branchId));
    }
    if (floor && floor.branch_id !== branch.id) {
      const head = branch.head_floor_id
        ? await variablesRepository.findFloor(db, accountId, branch.head_floor_id)
        : undefined;
      if (!head || !(await isInLineage(db, head, floor)))
        throw variableContextInvalid('branch_id does not agree with the floor', {
          branch_id: branchId,
          floor_id: floor.id,
          floor_branch_id: floor.branch_id,
        });
    }
  } else if (floor) {
    branchId = floor.branch_id;
  }
  return { accountId, sessionId: session.id, branchId, floorId, pageId };
}

/** The scopes of a context from high to low priority, with their scope_ids. */
export function contextTargets(ctx: VariableContext): Array<{ scope: VariableScopeName; scopeId: string }> {
  const out: Array<{ scope: VariableScopeName; scopeId: string }> = [];
  if (ctx.pageId) out.push({ scope: 'page', scopeId: ctx.pageId });
  if (ctx.floorId) out.push({ scope: 'floor', scopeId: ctx.floorId });
  if (ctx.branchId) out.push({ scope: 'branch', scopeId: branchScopeId(ctx.sessionId, ctx.branchId) });
  out.push({ scope: 'chat', scopeId: ctx.sessionId });
  out.push({ scope: 'global', scopeId: GLOBAL_SCOPE_ID });
  return out;
}

/** The durable variables of every layer of a context, high to low priority, in one query. */
export async function loadContextLayers(db: Executor, ctx: VariableContext): Promise<VariableLayer[]> {
  const targets = contextTargets(ctx);
  return layersOf(targets, await variablesRepository.listOfTargets(db, ctx.accountId, targets));
}

/**
 * The layers of a context from rows read elsewhere (a turn reads them with its branch): the rows must
 * be those of `listOfTargets` for the same targets, key order.
 */
export function contextLayersFromRows(ctx: VariableContext, rows: VariableRow[]): VariableLayer[] {
  return layersOf(contextTargets(ctx), rows);
}

function layersOf(
  targets: Array<{ scope: VariableScopeName; scopeId: string }>,
  rows: VariableRow[],
): VariableLayer[] {
  return targets.map((t) => ({
    scope: t.scope,
    scopeId: t.scopeId,
    items: rows.filter((r) => r.scope === t.scope && r.scope_id === t.scopeId),
  }));
}
