import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Worldbooks and their normalised entries (spec 3 "Worldbooks"; docs/decisions.md "Worldbooks").
 * `worldbooks.extra` holds the book's top-level fields other than `name` and `entries` (the global fields
 * scanDepth, caseSensitive, matchWholeWords, recursive, maxRecursionSteps and every unknown key).
 * Each entry keeps spec 3's normalised fields as columns and the ST entry's other fields in `raw`, so the
 * export is lossless. Numeric entry fields are `double precision` so an imported value is kept exactly;
 * the API accepts integers only. `search_text` is the lower-cased keys, secondary keys, comment and
 * content, for the list's `q` filter. `snapshot_version` / `delta_entry_count` track the version chain:
 * a version is a full snapshot or a delta on the latest snapshot.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE worldbooks (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      source text NOT NULL DEFAULT 'ext_frontend',
      version integer NOT NULL CHECK (version >= 1),
      extra jsonb NOT NULL DEFAULT '{}'::jsonb,
      snapshot_version integer NOT NULL DEFAULT 1,
      delta_entry_count integer NOT NULL DEFAULT 0,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX worldbooks_account_updated ON worldbooks (account_id, updated_at, id);
    CREATE INDEX worldbooks_account_created ON worldbooks (account_id, created_at, id);
    CREATE TABLE worldbook_entries (
      id text PRIMARY KEY,
      worldbook_id text NOT NULL REFERENCES worldbooks (id) ON DELETE CASCADE,
      account_id text NOT NULL,
      uid integer NOT NULL CHECK (uid >= 0),
      keys jsonb NOT NULL,
      keys_secondary jsonb NOT NULL,
      content text NOT NULL,
      comment text NOT NULL,
      selective boolean NOT NULL,
      selective_logic double precision NOT NULL,
      constant boolean NOT NULL,
      position double precision NOT NULL,
      "order" double precision NOT NULL,
      depth double precision NOT NULL,
      role double precision NOT NULL,
      disable boolean NOT NULL,
      scan_depth double precision,
      case_sensitive boolean,
      match_whole_words boolean,
      exclude_recursion boolean NOT NULL,
      prevent_recursion boolean NOT NULL,
      delay_until_recursion double precision,
      outlet_name text NOT NULL,
      raw jsonb NOT NULL,
      search_text text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (worldbook_id, uid)
    );
    CREATE INDEX worldbook_entries_order ON worldbook_entries (worldbook_id, "order", uid);
    CREATE INDEX worldbook_entries_updated ON worldbook_entries (worldbook_id, updated_at, uid);
  `,
  );
}
