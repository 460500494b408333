import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Characters (issue 3 item 1; docs/decisions.md "Characters"): the head row of each character. Its immutable
 * versions (the stored cards) live in `asset_versions` with `asset_kind = 'character'`. A DELETE sets
 * `deleted_at` (soft delete), so sessions pinned to a version keep their card.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE characters (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      source text NOT NULL,
      source_format text NOT NULL,
      latest_version_id text NOT NULL,
      version_no integer NOT NULL CHECK (version_no >= 1),
      deleted_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX characters_account_updated ON characters (account_id, updated_at, id) WHERE deleted_at IS NULL;
    CREATE INDEX characters_account_created ON characters (account_id, created_at, id) WHERE deleted_at IS NULL;
    CREATE INDEX characters_account_name ON characters (account_id, name, id) WHERE deleted_at IS NULL;
  `,
  );
}
