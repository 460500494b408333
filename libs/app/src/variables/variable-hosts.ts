import { variablesRepository, type Executor, type NewVariable } from '@hearth/persistence';
import {
  isLockingFloorState,
  variableHostNotFound,
  variableTargetLocked,
  type NormalisedTarget,
} from './variable-rules';

/** The host columns of a variable row (they cascade the host's deletion). */
export type HostColumns = Pick<NewVariable, 'session_id' | 'branch_id' | 'floor_id' | 'page_id'>;

/**
 * Cache of host checks within one request (a batch writing many keys of one host checks it once).
 * Keys are `scope\0scope_id`.
 */
export type HostCache = Map<string, HostColumns>;

/**
 * The host of a write, checked inside the caller's transaction: it must exist in the account (404
 * `variable_host_not_found`, also for another account's host and for a temporary conversation's); a
 * floor in `generating` or `committed` state and its pages are locked (409 `variable_target_locked`). The floor row is
 * share-locked, so its state cannot change before the write commits. A branch must be registered (a
 * `branches` row of the session); one with no floor accepts writes.
 */
export async function requireWritableHost(
  tx: Executor,
  accountId: string,
  target: NormalisedTarget,
  options: { index?: number; cache?: HostCache } = {},
): Promise<HostColumns> {
  const cacheKey = `${target.scope}\u0000${target.scopeId}`;
  const cached = options.cache?.get(cacheKey);
  if (cached) return cached;
  const host = await checkHost(tx, accountId, target, options.index);
  options.cache?.set(cacheKey, host);
  return host;
}

async function checkHost(
  tx: Executor,
  accountId: string,
  target: NormalisedTarget,
  index: number | undefined,
): Promise<HostColumns> {
  const none: HostColumns = { session_id: null, branch_id: null, floor_id: null, page_id: null };
  const missing = () => variableHostNotFound(target.scope, target.scopeId, index);
  switch (target.scope) {
    case 'global':
      return none;
    case 'chat': {
      const session = await variablesRepository.findSession(tx, accountId, target.scopeId);
      if (!session) throw missing();
      return { ...none, session_id: session.id };
    }
    case 'branch': {
      const branch = await variablesRepository.findBranch(tx, accountId, target.sessionId!, target.branchId!);
      if (!branch || !(await inStandardSession(tx, accountId, branch.session_id))) throw missing();
      return { ...none, session_id: branch.session_id, branch_id: branch.id };
    }
    case 'floor': {
      const floor = await variablesRepository.findFloor(tx, accountId, target.scopeId, { share: true });
      if (!floor || !(await inStandardSession(tx, accountId, floor.session_id))) throw missing();
      if (isLockingFloorState(floor.state))
        throw variableTargetLocked(target.scope, target.scopeId, floor.id, floor.state, index);
      return { ...none, session_id: floor.session_id, floor_id: floor.id };
    }
    case 'page': {
      const page = await variablesRepository.findPage(tx, accountId, target.scopeId);
      if (!page || !(await inStandardSession(tx, accountId, page.session_id))) throw missing();
      const floor = await variablesRepository.findFloor(tx, accountId, page.floor_id, { share: true });
      if (!floor) throw missing();
      if (isLockingFloorState(floor.state))
        throw variableTargetLocked(target.scope, target.scopeId, floor.id, floor.state, index);
      return { ...none, session_id: page.session_id, page_id: page.id };
    }
  }
}

/** A temporary conversation's branches, floors and pages are no variable hosts: they read as missing. */
async function inStandardSession(tx: Executor, accountId: string, sessionId: string): Promise<boolean> {
  return (await variablesRepository.findSession(tx, accountId, sessionId)) !== undefined;
}

/**
 * Whether deleting a stored variable is blocked by its host's lock (floor and page scopes): 409
 * `variable_target_locked`. The floor row is share-locked.
 */
export async function requireUnlockedForDelete(
  tx: Executor,
  accountId: string,
  variable: {
    scope: NormalisedTarget['scope'];
    scope_id: string;
    floor_id: string | null;
    page_id: string | null;
  },
): Promise<void> {
  let floorId: string | null = null;
  if (variable.scope === 'floor') floorId = variable.floor_id;
  if (variable.scope === 'page' && variable.page_id) {
    const page = await variablesRepository.findPage(tx, accountId, variable.page_id);
    floorId = page?.floor_id ?? null;
  }
  if (!floorId) return;
  const floor = await variablesRepository.findFloor(tx, accountId, floorId, { share: true });
  if (floor && isLockingFloorState(floor.state))
    throw variableTargetLocked(variable.scope, variable.scope_id, floor.id, floor.state);
}
