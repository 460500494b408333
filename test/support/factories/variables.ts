import { ID_PREFIX, newId } from '@hearth/domain';
import type { FloorRow, PageRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';
import { createFloor, ensureMainBranch } from './conversation';
import type { Caller } from './members';
import { createSession } from './sessions';

/**
 * Hosts for variable tests: a session made through `POST /sessions` (so its `main` branch is
 * registered), floors on `main` in the states the tests need, each with one page.
 */
export interface VariableHosts {
  sessionId: string;
  accountId: string;
  branchId: string;
  /** `<session_id>:<branch_id>`. */
  branchScopeId: string;
  /** A `failed` floor and its page: variable writes allowed. */
  openFloor: FloorRow;
  openPage: PageRow;
  /** A `committed` floor and its page: writes locked. */
  committedFloor: FloorRow;
  committedPage: PageRow;
}

export async function createVariableHosts(t: TestApp, caller: Caller): Promise<VariableHosts> {
  const created = await createSession(t, { apiKey: caller.apiKey });
  const session = { id: created.id, account_id: caller.accountId };
  const branch = await ensureMainBranch(t, session);
  const committed = await createFloor(t, session, { state: 'committed' });
  const open = await createFloor(t, session, { state: 'failed' });
  return {
    sessionId: created.id,
    accountId: caller.accountId,
    branchId: branch.id,
    branchScopeId: `${created.id}:${branch.id}`,
    openFloor: open.floor,
    openPage: open.page,
    committedFloor: committed.floor,
    committedPage: committed.page,
  };
}

/** `PUT /variables` with a caller's key. */
export const putVariable = (t: TestApp, apiKey: string, body: Record<string, unknown>) =>
  t.http.put('/variables').set('x-api-key', apiKey).send(body);

/** `PUT /variables/batch` with a caller's key. */
export const putVariableBatch = (t: TestApp, apiKey: string, items: unknown) =>
  t.http.put('/variables/batch').set('x-api-key', apiKey).send({ items });

/** Moves a floor to another state (floor state transitions have no route; spec 2 "not shown"). */
export async function setFloorState(t: TestApp, floorId: string, state: FloorRow['state']): Promise<void> {
  await t.resources.database.db.updateTable('floors').set({ state }).where('id', '=', floorId).execute();
}

/** An extra registered branch of a session with no floor (a branch host that accepts writes). */
export async function createBranchRow(
  t: TestApp,
  session: { id: string; account_id: string },
  name = `extra-${newId('n')}`,
): Promise<string> {
  const now = Date.now();
  const row = await t.resources.database.db
    .insertInto('branches')
    .values({
      id: newId(ID_PREFIX.branch),
      account_id: session.account_id,
      session_id: session.id,
      name,
      source_floor_id: null,
      head_floor_id: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Deletes a floor row (its pages, variables, ledger and snapshot go with it by cascade). */
export async function deleteFloorRow(t: TestApp, floorId: string): Promise<void> {
  await t.resources.database.db.deleteFrom('floors').where('id', '=', floorId).execute();
}
