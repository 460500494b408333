import { sql, type Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Client data (docs/decisions.md "Client data and session state"): the account's registered custom
 * namespaces, and the session state writes that turns landed on their floors.
 *
 * - `client_data_namespaces`: one row per registered namespace (name unique per account). Deleting a
 *   namespace deletes every write made in it (ON DELETE CASCADE).
 * - `session_state_mutations`: one row per landed write, on the floor of the turn that carried it, in
 *   request order (`seq`). The state a floor sees is, for each (namespace, slot), the newest write on the
 *   floor's lineage (docs: "State at a floor"); `present` is false for a `delete: true` write.
 * - `client_data_usage`: the account's stored values (writes that are not deletes) and their bytes, kept
 *   by statement triggers on `session_state_mutations` (cascaded deletes of sessions, floors and
 *   namespaces included), so the account limits are checked against one locked row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE client_data_namespaces (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_.-]{0,63}$'),
      description text CHECK (description IS NULL OR char_length(description) <= 2000),
      replay_policy text NOT NULL CHECK (replay_policy IN ('replay', 'confirm', 'block')),
      max_items integer NOT NULL CHECK (max_items BETWEEN 1 AND 10000),
      max_bytes integer NOT NULL CHECK (max_bytes BETWEEN 1 AND 16777216),
      created_by_client_id text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (account_id, name)
    );

    CREATE TABLE session_state_mutations (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      namespace_id text NOT NULL REFERENCES client_data_namespaces (id) ON DELETE CASCADE,
      namespace text NOT NULL,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text NOT NULL,
      floor_id text NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
      seq integer NOT NULL CHECK (seq >= 1),
      slot text NOT NULL CHECK (char_length(slot) BETWEEN 1 AND 256),
      present boolean NOT NULL,
      value jsonb,
      value_bytes integer NOT NULL CHECK (value_bytes >= 0),
      run_id text,
      created_by_client_id text,
      created_at bigint NOT NULL,
      CHECK (present = (value IS NOT NULL)),
      UNIQUE (floor_id, seq)
    );
    CREATE INDEX session_state_mutations_session ON session_state_mutations (session_id, namespace_id, slot);
    CREATE INDEX session_state_mutations_namespace ON session_state_mutations (namespace_id);
    CREATE INDEX session_state_mutations_account ON session_state_mutations (account_id);

    CREATE TABLE client_data_usage (
      account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
      items bigint NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0
    );

  `,
  );
  // plpgsql bodies hold semicolons at line ends: each function is one statement of its own.
  await sql
    .raw(
      `CREATE FUNCTION client_data_usage_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO client_data_usage AS u (account_id, items, bytes)
  SELECT account_id, count(*) FILTER (WHERE present), coalesce(sum(value_bytes), 0)
  FROM added GROUP BY account_id
  ON CONFLICT (account_id) DO UPDATE SET items = u.items + excluded.items, bytes = u.bytes + excluded.bytes;
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE FUNCTION client_data_usage_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE client_data_usage u
    SET items = greatest(u.items - d.items, 0), bytes = greatest(u.bytes - d.bytes, 0)
  FROM (SELECT account_id, count(*) FILTER (WHERE present) AS items, coalesce(sum(value_bytes), 0) AS bytes
        FROM removed GROUP BY account_id) d
  WHERE u.account_id = d.account_id;
  RETURN NULL;
END
$$`,
    )
    .execute(db);
  await runStatements(
    db,
    `
    CREATE TRIGGER session_state_mutations_added AFTER INSERT ON session_state_mutations
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION client_data_usage_added();
    CREATE TRIGGER session_state_mutations_removed AFTER DELETE ON session_state_mutations
      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION client_data_usage_removed();
  `,
  );
}
