import { newId } from '@hearth/domain';
import {
  conversationRepository,
  variablesRepository,
  type Executor,
  type VariableRow,
} from '@hearth/persistence';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { requireWritableHost, type HostCache } from './variable-hosts';
import {
  branchScopeId,
  normaliseTarget,
  serialiseVariableValue,
  VARIABLE_ID_PREFIX,
  variableHostNotFound,
  type NormalisedTarget,
  type VariableTargetInput,
} from './variable-rules';

/** One `VariableWrite` (spec 2 "Upsert body"). */
export interface VariableWriteInput extends VariableTargetInput {
  key: string;
  /** Any JSON; `undefined` means the field was missing (400). */
  value: unknown;
}

/** A write checked without I/O: its normalised target and serialised value. */
export interface PreparedWrite {
  target: NormalisedTarget;
  key: string;
  json: string;
  bytes: number;
}

export function prepareWrite(input: VariableWriteInput, index?: number): PreparedWrite {
  const target = normaliseTarget(input, index);
  const { json, bytes } = serialiseVariableValue(input.value, index);
  return { target, key: input.key, json, bytes };
}

/**
 * The branch id a request names: a branch id of the session, or `main`, the name of every session's
 * default branch (spec 2), which stands for that branch's id. Anything else is returned unchanged (an
 * unknown branch then answers 404 where its host is looked up).
 */
export async function branchIdOfName(
  db: Executor,
  accountId: string,
  sessionId: string,
  branchId: string,
): Promise<string> {
  if (branchId !== MAIN_BRANCH) return branchId;
  const main = await conversationRepository.findBranchByName(db, sessionId, MAIN_BRANCH);
  return main && main.account_id === accountId ? main.id : branchId;
}

/**
 * A branch target whose branch is named `main` rewritten to the branch's id (and internal scope_id).
 * `mainIds` shares the lookups of one request: one per session, however many targets name it.
 */
export async function canonicalTarget(
  db: Executor,
  accountId: string,
  target: NormalisedTarget,
  mainIds = new Map<string, Promise<string>>(),
): Promise<NormalisedTarget> {
  if (target.scope !== 'branch' || !target.sessionId || target.branchId !== MAIN_BRANCH) return target;
  let id = mainIds.get(target.sessionId);
  if (!id) {
    id = branchIdOfName(db, accountId, target.sessionId, target.branchId);
    mainIds.set(target.sessionId, id);
  }
  const branchId = await id;
  return { ...target, branchId, scopeId: branchScopeId(target.sessionId, branchId) };
}

/** The writes of a request with their `main` branch targets rewritten (see `canonicalTarget`). */
export async function canonicalWrites(
  db: Executor,
  accountId: string,
  writes: PreparedWrite[],
): Promise<PreparedWrite[]> {
  const mainIds = new Map<string, Promise<string>>();
  const out: PreparedWrite[] = [];
  for (const write of writes)
    out.push({ ...write, target: await canonicalTarget(db, accountId, write.target, mainIds) });
  return out;
}

/** A write whose host the database refused meanwhile (deleted concurrently: SQLSTATE 23503). */
const isForeignKeyViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';

/**
 * Checks the host (404 / 409) and upserts the variable, inside the caller's transaction. A host deleted
 * between the check and the write (the foreign key refuses it) is 404 `variable_host_not_found` too.
 */
export async function applyWrite(
  tx: Executor,
  accountId: string,
  write: PreparedWrite,
  options: { index?: number; cache?: HostCache; now?: number } = {},
): Promise<{ variable: VariableRow; created: boolean }> {
  const target = await canonicalTarget(tx, accountId, write.target);
  const host = await requireWritableHost(tx, accountId, target, options);
  const now = options.now ?? Date.now();
  try {
    return await variablesRepository.upsert(tx, {
      id: newId(VARIABLE_ID_PREFIX.variable),
      account_id: accountId,
      scope: target.scope,
      scope_id: target.scopeId,
      ...host,
      key: write.key,
      value: write.json,
      created_at: now,
      updated_at: now,
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw variableHostNotFound(target.scope, target.scopeId, options.index);
    throw error;
  }
}
