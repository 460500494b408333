import { ID_PREFIX, newId } from '@hearth/domain';
import type { BranchesTable, PromptInjectionRow } from '@hearth/persistence';
import type { Selectable } from 'kysely';
import type { TestApp } from '../test-app';
import { createFloor } from './conversation';
import { createFloorRow } from './floors';

/** Branch helpers and clock shifts for the prompt runtime policy and injection tests. */

type SessionRef = { id: string; account_id: string };

/** The session's `main` branch, materialised (a committed floor of its own). */
export async function materialisedMain(t: TestApp, session: SessionRef): Promise<Selectable<BranchesTable>> {
  return (await createFloor(t, session)).branch;
}

/** Another branch of the session with a floor of its own. */
export async function materialisedBranch(t: TestApp, session: SessionRef): Promise<string> {
  return (await createFloorRow(t, session)).branch_id;
}

/** A branch of the session without any floor (not materialised). */
export async function emptyBranch(t: TestApp, session: SessionRef): Promise<string> {
  const now = Date.now();
  const row = await t.resources.database.db
    .insertInto('branches')
    .values({
      id: newId(ID_PREFIX.branch),
      account_id: session.account_id,
      session_id: session.id,
      name: `empty ${newId(ID_PREFIX.branch)}`,
      source_floor_id: null,
      head_floor_id: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Moves an injection with a TTL back in time so that it has expired (`created_at + ttl_ms` one ms ago),
 * instead of waiting for its TTL.
 */
export async function expireInjection(t: TestApp, id: string): Promise<PromptInjectionRow> {
  const db = t.resources.database.db;
  const row = await db
    .selectFrom('prompt_injections')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const ttl = row.ttl_ms ?? 1;
  const createdAt = Date.now() - ttl - 1;
  return db
    .updateTable('prompt_injections')
    .set({ ttl_ms: ttl, created_at: createdAt, expires_at: createdAt + ttl })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function injectionRows(t: TestApp, sessionId: string): Promise<PromptInjectionRow[]> {
  return t.resources.database.db
    .selectFrom('prompt_injections')
    .selectAll()
    .where('session_id', '=', sessionId)
    .orderBy('id')
    .execute();
}

/**
 * `n` live session-scope (or branch-scope) injections inserted straight into the table: quicker than
 * `n` POSTs when a test needs a scope near its quota.
 */
export async function fillInjections(
  t: TestApp,
  session: SessionRef,
  n: number,
  branchId: string | null = null,
): Promise<void> {
  const now = Date.now();
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId('pinj'),
    account_id: session.account_id,
    session_id: session.id,
    branch_id: branchId,
    scope: branchId ? ('branch' as const) : ('session' as const),
    source_kind: 'client_injection' as const,
    title: `Filler ${i}`,
    content: `Filler content ${i}`,
    placement: 'after_history',
    placement_params: null,
    order: 100,
    enabled: true,
    mode_scope: null,
    ttl_ms: null,
    expires_at: null,
    created_by: session.account_id,
    created_at: now,
    updated_at: now,
  }));
  if (rows.length > 0) await t.resources.database.db.insertInto('prompt_injections').values(rows).execute();
}
