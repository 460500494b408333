import { ID_PREFIX, newId } from '@hearth/domain';
import type { FloorRow, PageRow, SessionRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';

type SessionRef = Pick<SessionRow, 'id' | 'account_id'>;

/**
 * A floor of a session, inserted directly (kysely) on a new branch of that session: enough of the
 * conversation tree for features that reference floors and pages (derived output and inbox sources).
 * The floor and its branch belong to the session's account.
 */
export async function createFloorRow(
  t: TestApp,
  session: SessionRef,
  options: { floorNo?: number } = {},
): Promise<FloorRow> {
  const db = t.resources.database.db;
  const now = Date.now();
  const branch = await db
    .insertInto('branches')
    .values({
      id: newId(ID_PREFIX.branch),
      account_id: session.account_id,
      session_id: session.id,
      name: `branch ${newId(ID_PREFIX.branch)}`,
      source_floor_id: null,
      head_floor_id: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return db
    .insertInto('floors')
    .values({
      id: newId(ID_PREFIX.floor),
      account_id: session.account_id,
      session_id: session.id,
      branch_id: branch.id,
      floor_no: options.floorNo ?? 0,
      parent_floor_id: null,
      state: 'committed',
      token_in: 0,
      token_out: 0,
      reasoning_text: null,
      metadata: JSON.stringify({}),
      superseded_at: null,
      superseded_by_floor_id: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A page of a floor (same account and session as the floor), inserted directly. */
export async function createPageRow(
  t: TestApp,
  floor: Pick<FloorRow, 'id' | 'account_id' | 'session_id'>,
  options: { pageNo?: number } = {},
): Promise<PageRow> {
  const now = Date.now();
  return t.resources.database.db
    .insertInto('pages')
    .values({
      id: newId(ID_PREFIX.page),
      account_id: floor.account_id,
      session_id: floor.session_id,
      floor_id: floor.id,
      page_no: options.pageNo ?? 0,
      page_kind: 'output',
      is_active: true,
      version: 1,
      checksum: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A floor of the session with one page: the usual source pair. */
export async function createFloorWithPage(
  t: TestApp,
  session: SessionRef,
): Promise<{ floor: FloorRow; page: PageRow }> {
  const floor = await createFloorRow(t, session);
  const page = await createPageRow(t, floor);
  return { floor, page };
}
