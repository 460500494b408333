import { variablesRepository, type Executor, type FloorRow, type Tx } from '@hearth/persistence';
import { checkVariableContext, loadContextLayers, type VariableContextInput } from './variable-context';
import { branchLocalSnapshotMissing, flattenLayers } from './variable-rules';

/** What the macro engine reads (libs/domain/src/prompt/macros/variables.ts `VariableViews`). */
export interface LoadedVariableViews {
  /** page > floor > branch > chat, flattened by key. */
  local: Record<string, unknown>;
  /** The global scope. */
  global: Record<string, unknown>;
}

/**
 * The `{local, global}` views of a turn's context (spec 2 "Macro compatibility"): local is the resolved
 * non-global layers (page > floor > branch > chat) flattened by key, global the global scope. The
 * context is checked like `GET /variables/resolve` (404 / 400). Durable values only.
 */
export async function loadVariableViews(
  db: Executor,
  accountId: string,
  input: VariableContextInput,
): Promise<LoadedVariableViews> {
  const ctx = await checkVariableContext(db, accountId, input);
  const layers = await loadContextLayers(db, ctx);
  return {
    local: flattenLayers(layers.filter((l) => l.scope !== 'global')),
    global: flattenLayers(layers.filter((l) => l.scope === 'global')),
  };
}

/**
 * Stores the exact local view a floor's turn saw (one row per floor, replaced when written again), so a
 * swipe, retry or branch from the floor sees the same state.
 */
export async function snapshotLocalView(
  tx: Tx,
  floor: Pick<FloorRow, 'id' | 'account_id' | 'session_id' | 'branch_id'>,
  local: Record<string, unknown>,
  now = Date.now(),
): Promise<void> {
  await variablesRepository.upsertSnapshot(tx, {
    floor_id: floor.id,
    account_id: floor.account_id,
    session_id: floor.session_id,
    branch_id: floor.branch_id,
    local_view: JSON.stringify(local),
    created_at: now,
    updated_at: now,
  });
}

/** The local view stored for a floor, or null when none was stored. */
export async function loadFloorLocalSnapshot(
  db: Executor,
  accountId: string,
  floorId: string,
): Promise<Record<string, unknown> | null> {
  const row = await variablesRepository.findSnapshot(db, accountId, floorId);
  return row ? (row.local_view as Record<string, unknown>) : null;
}

/**
 * For a preview on a branch that is not materialised yet (`branch_id` with `source_floor_id`): the
 * source floor's exact local snapshot, or 409 `branch_local_snapshot_missing`.
 */
export async function requireBranchLocalSnapshot(
  db: Executor,
  accountId: string,
  sourceFloorId: string,
): Promise<Record<string, unknown>> {
  const local = await loadFloorLocalSnapshot(db, accountId, sourceFloorId);
  if (!local) throw branchLocalSnapshotMissing(sourceFloorId);
  return local;
}
