import { ID_PREFIX, newId } from '@hearth/domain';
import type { AssetKind, AssetVersionRow, BranchesTable, FloorRow, PageRow } from '@hearth/persistence';
import { inTransaction } from '@hearth/persistence';
import { appendUserFloor, commitFloor } from '@hearth/app';
import type { Selectable } from 'kysely';
import type { TestApp } from '../test-app';

/**
 * Conversation rows written straight into the tables of db/migrations/20261122001000_conversation_core.ts
 * (no route creates floors before issue 5), and asset versions written straight into `asset_versions`
 * (the asset routes are built elsewhere). Tests use them as targets (tags, derived outputs, inbox).
 */

export interface FactoryFloor {
  branch: Selectable<BranchesTable>;
  floor: FloorRow;
  page: PageRow;
}

/** The `main` branch of a session, made on first use. */
export async function ensureMainBranch(
  t: TestApp,
  session: { id: string; account_id: string },
): Promise<Selectable<BranchesTable>> {
  const db = t.resources.database.db;
  const existing = await db
    .selectFrom('branches')
    .selectAll()
    .where('session_id', '=', session.id)
    .where('name', '=', 'main')
    .executeTakeFirst();
  if (existing) return existing;
  const now = Date.now();
  return db
    .insertInto('branches')
    .values({
      id: newId(ID_PREFIX.branch),
      account_id: session.account_id,
      session_id: session.id,
      name: 'main',
      source_floor_id: null,
      head_floor_id: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A committed floor appended to the session's `main` branch (floor_no after its head), with one
 * active `output` page, and the branch head moved to it.
 */
export async function createFloor(
  t: TestApp,
  session: { id: string; account_id: string },
  options: { state?: FloorRow['state'] } = {},
): Promise<FactoryFloor> {
  const db = t.resources.database.db;
  const branch = await ensureMainBranch(t, session);
  const head = branch.head_floor_id
    ? await db.selectFrom('floors').selectAll().where('id', '=', branch.head_floor_id).executeTakeFirst()
    : undefined;
  const now = Date.now();
  const floor = await db
    .insertInto('floors')
    .values({
      id: newId(ID_PREFIX.floor),
      account_id: session.account_id,
      session_id: session.id,
      branch_id: branch.id,
      floor_no: head ? head.floor_no + 1 : 0,
      parent_floor_id: head?.id ?? null,
      state: options.state ?? 'committed',
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
  const page = await db
    .insertInto('pages')
    .values({
      id: newId(ID_PREFIX.page),
      account_id: session.account_id,
      session_id: session.id,
      floor_id: floor.id,
      page_no: 0,
      page_kind: 'output',
      is_active: true,
      version: 1,
      checksum: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const moved = await db
    .updateTable('branches')
    .set({ head_floor_id: floor.id, updated_at: now })
    .where('id', '=', branch.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { branch: moved, floor, page };
}

const VERSION_PREFIX: Record<AssetKind, string> = {
  character: ID_PREFIX.characterVersion,
  preset: ID_PREFIX.presetVersion,
  worldbook: ID_PREFIX.worldbookVersion,
  regex_profile: ID_PREFIX.regexProfileVersion,
};

const ASSET_PREFIX: Record<AssetKind, string> = {
  character: ID_PREFIX.character,
  preset: ID_PREFIX.preset,
  worldbook: ID_PREFIX.worldbook,
  regex_profile: ID_PREFIX.regexProfile,
};

/**
 * One `asset_versions` row of the account (version 1 of a new asset id unless `assetId` is given, then
 * the next number). No head row is written: tags and backups address versions only.
 */
export async function createAssetVersion(
  t: TestApp,
  accountId: string,
  options: { kind?: AssetKind; assetId?: string; name?: string; payload?: unknown } = {},
): Promise<AssetVersionRow> {
  const db = t.resources.database.db;
  const kind = options.kind ?? 'character';
  const assetId = options.assetId ?? newId(ASSET_PREFIX[kind]);
  const last = await db
    .selectFrom('asset_versions')
    .select((eb) => eb.fn.max('version_no').as('n'))
    .where('asset_id', '=', assetId)
    .executeTakeFirst();
  return db
    .insertInto('asset_versions')
    .values({
      id: newId(VERSION_PREFIX[kind]),
      account_id: accountId,
      asset_kind: kind,
      asset_id: assetId,
      version_no: Number(last?.n ?? 0) + 1,
      name: options.name ?? `Factory ${kind}`,
      payload: JSON.stringify(options.payload ?? { name: options.name ?? `Factory ${kind}` }),
      source_format: null,
      change_kind: 'create',
      created_by_operation_id: null,
      created_at: Date.now(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Issue 5: floors written through the conversation writes the turn use cases call (`appendUserFloor`
 * then `commitFloor`), so they have lines, pages, messages and token counts like real turns.
 */
export async function appendTurns(
  t: TestApp,
  session: { id: string; account_id: string },
  count: number,
  options: { branchId?: string; text?: (i: number) => string } = {},
): Promise<FloorRow[]> {
  const db = t.resources.database.db;
  const branchId = options.branchId ?? (await ensureMainBranch(t, session)).id;
  const floors: FloorRow[] = [];
  for (let i = 0; i < count; i++) {
    const text = options.text?.(i) ?? `turn ${i}`;
    floors.push(
      await inTransaction(db, async ({ tx }) => {
        const { floor } = await appendUserFloor(tx, {
          session,
          branchId,
          messages: [{ role: 'user', content: `user: ${text}`, source: 'user' }],
        });
        return (
          await commitFloor(tx, {
            floorId: floor.id,
            messages: [{ role: 'assistant', content: `reply: ${text}`, source: 'model' }],
            token_in: 10,
            token_out: 5,
          })
        ).floor;
      }),
    );
  }
  return floors;
}

/** A `generating` floor appended to a branch (a turn in progress). */
export async function appendGeneratingFloor(
  t: TestApp,
  session: { id: string; account_id: string },
  options: { branchId?: string } = {},
): Promise<FloorRow> {
  const db = t.resources.database.db;
  const branchId = options.branchId ?? (await ensureMainBranch(t, session)).id;
  return inTransaction(db, async ({ tx }) => {
    const { floor } = await appendUserFloor(tx, {
      session,
      branchId,
      messages: [{ role: 'user', content: 'in progress', source: 'user' }],
    });
    return floor;
  });
}

/**
 * A long linear chat on an empty `main` branch, written in bulk (one line, floors 0..count-1, each
 * with an input and an output page of one message), for paging and size tests.
 */
export async function createLongChat(
  t: TestApp,
  session: { id: string; account_id: string },
  count: number,
): Promise<{ branchId: string; floorIds: string[] }> {
  const db = t.resources.database.db;
  const branch = await ensureMainBranch(t, session);
  if (branch.head_floor_id) throw new Error('createLongChat needs an empty main branch');
  const now = Date.now();
  const lineId = newId('fline');
  await db
    .insertInto('floor_lines')
    .values({
      id: lineId,
      account_id: session.account_id,
      session_id: session.id,
      parent_line_id: null,
      fork_floor_no: null,
      start_floor_no: 0,
      created_at: now,
    })
    .execute();
  const floorIds = Array.from({ length: count }, () => newId(ID_PREFIX.floor));
  const base = { account_id: session.account_id, session_id: session.id, created_at: now };
  for (let start = 0; start < count; start += 500) {
    const ids = floorIds.slice(start, start + 500);
    await db
      .insertInto('floors')
      .values(
        ids.map((id, k) => ({
          ...base,
          id,
          branch_id: branch.id,
          floor_no: start + k,
          parent_floor_id: start + k === 0 ? null : floorIds[start + k - 1],
          line_id: lineId,
          state: 'committed' as const,
          token_in: 10,
          token_out: 5,
          reasoning_text: null,
          metadata: JSON.stringify({}),
          updated_at: now,
        })),
      )
      .execute();
    const pages = ids.flatMap((floorId, k) =>
      (['input', 'output'] as const).map((kind, pageNo) => ({
        ...base,
        id: newId(ID_PREFIX.page),
        floor_id: floorId,
        page_no: pageNo,
        page_kind: kind,
        is_active: true,
        version: 1,
        checksum: null,
        updated_at: now,
        floorNo: start + k,
      })),
    );
    await db
      .insertInto('pages')
      .values(pages.map(({ floorNo: _n, ...p }) => p))
      .execute();
    await db
      .insertInto('messages')
      .values(
        pages.map((p) => ({
          ...base,
          id: newId(ID_PREFIX.message),
          floor_id: p.floor_id,
          page_id: p.id,
          seq: 0,
          role: p.page_kind === 'input' ? ('user' as const) : ('assistant' as const),
          content: `${p.page_kind} of floor ${p.floorNo}`,
          content_format: 'text',
          is_hidden: false,
          source: p.page_kind === 'input' ? 'user' : 'model',
          token_count: 4,
          token_encoding: 'o200k_base',
        })),
      )
      .execute();
  }
  await db
    .updateTable('branches')
    .set({ head_floor_id: floorIds[count - 1], updated_at: now })
    .where('id', '=', branch.id)
    .execute();
  return { branchId: branch.id, floorIds };
}
