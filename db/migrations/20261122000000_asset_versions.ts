import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Immutable versions of library assets (characters, presets, worldbooks, regex profiles) in one table, so
 * VC tags, backups and rollbacks address every kind of version the same way (docs/decisions.md "Library").
 * Each asset kind keeps its head row in its own table; `asset_id` points at it without a foreign key (the
 * head tables arrive in their own migrations), and versions go with their asset in the same transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE asset_versions (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      asset_kind text NOT NULL CHECK (asset_kind IN ('character', 'preset', 'worldbook', 'regex_profile')),
      asset_id text NOT NULL,
      version_no integer NOT NULL CHECK (version_no >= 1),
      name text NOT NULL,
      payload jsonb NOT NULL,
      source_format text,
      change_kind text NOT NULL,
      created_by_operation_id text,
      created_at bigint NOT NULL,
      UNIQUE (asset_id, version_no)
    );
    CREATE INDEX asset_versions_account ON asset_versions (account_id, asset_kind, id);
  `,
  );
}
