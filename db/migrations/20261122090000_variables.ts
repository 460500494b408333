import { sql, type Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Spec 2 variables (docs/decisions.md "Variables"):
 *
 * - `variables`: one row per (account, scope, scope_id, key). The host columns (`session_id`,
 *   `branch_id`, `floor_id`, `page_id`) reference the host with ON DELETE CASCADE, so deleting a session,
 *   branch, floor or page cleans its variables in the same statement.
 * - `variable_tombstones`: the ids of deleted variables (filled by a trigger on every delete, cascades
 *   included), so `DELETE /variables/:id` of a historical orphan id is still accepted for its account.
 * - `variable_staged_writes`: the page ledger (staged → accepted_page_only → promoted).
 * - `variable_promotions`: page → floor promotion trace items.
 * - `floor_variable_snapshots`: the exact local view a floor's turn saw.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE variables (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      scope text NOT NULL CHECK (scope IN ('global', 'chat', 'branch', 'floor', 'page')),
      scope_id text NOT NULL,
      session_id text REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text REFERENCES branches (id) ON DELETE CASCADE,
      floor_id text REFERENCES floors (id) ON DELETE CASCADE,
      page_id text REFERENCES pages (id) ON DELETE CASCADE,
      key text NOT NULL CHECK (length(key) >= 1),
      value jsonb NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (account_id, scope, scope_id, key),
      CHECK (scope <> 'global' OR (scope_id = 'global' AND session_id IS NULL)),
      CHECK (scope <> 'chat' OR scope_id = session_id),
      CHECK (scope <> 'branch' OR (branch_id IS NOT NULL AND scope_id = session_id || ':' || branch_id)),
      CHECK (scope <> 'floor' OR scope_id = floor_id),
      CHECK (scope <> 'page' OR scope_id = page_id)
    );
    CREATE INDEX variables_account_updated ON variables (account_id, updated_at, id);
    CREATE INDEX variables_account_scope_updated ON variables (account_id, scope, updated_at, id);
    CREATE INDEX variables_session ON variables (session_id);
    CREATE INDEX variables_branch ON variables (branch_id);
    CREATE INDEX variables_floor ON variables (floor_id);
    CREATE INDEX variables_page ON variables (page_id);

    CREATE TABLE variable_tombstones (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      deleted_at bigint NOT NULL
    );

    CREATE TABLE variable_staged_writes (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text NOT NULL,
      floor_id text NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
      page_id text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      key text NOT NULL CHECK (length(key) >= 1),
      op text NOT NULL,
      value jsonb NOT NULL,
      intent text NOT NULL,
      conflict_policy text NOT NULL,
      reason text,
      source jsonb NOT NULL,
      evidence jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('staged', 'accepted_page_only', 'promoted')),
      decision_reason text,
      created_at bigint NOT NULL,
      resolved_at bigint,
      UNIQUE (page_id, seq)
    );

    CREATE TABLE variable_promotions (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      page_id text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
      staged_write_id text NOT NULL REFERENCES variable_staged_writes (id) ON DELETE CASCADE,
      key text NOT NULL,
      from_scope text NOT NULL,
      from_scope_id text NOT NULL,
      to_scope text NOT NULL,
      to_scope_id text NOT NULL,
      conflict_policy text NOT NULL,
      source_variable_id text,
      target_variable_id text,
      value jsonb NOT NULL,
      created_at bigint NOT NULL
    );
    CREATE INDEX variable_promotions_page ON variable_promotions (page_id, id);

    CREATE TABLE floor_variable_snapshots (
      floor_id text PRIMARY KEY REFERENCES floors (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text NOT NULL,
      local_view jsonb NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
  `,
  );
  // A plpgsql body holds semicolons, so these two run on their own (runStatements splits on them).
  // During an account deletion the account row is already gone: no tombstone (it would dangle).
  await sql
    .raw(
      `CREATE FUNCTION variables_record_tombstone() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM accounts WHERE id = OLD.account_id) THEN
    INSERT INTO variable_tombstones (id, account_id, deleted_at)
    VALUES (OLD.id, OLD.account_id, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
    ON CONFLICT (id) DO NOTHING;
  END IF;
  RETURN OLD;
END
$fn$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER variables_tombstone AFTER DELETE ON variables
       FOR EACH ROW EXECUTE FUNCTION variables_record_tombstone()`,
    )
    .execute(db);
}
