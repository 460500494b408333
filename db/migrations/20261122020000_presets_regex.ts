import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Chat-completion presets and regex profiles (spec 3 "Imports", "Exports"; issue 3 item 2). Each keeps
 * a head row here and its immutable versions in `asset_versions`. Deletes are soft (`deleted_at`), so
 * versions pinned by sessions and tags stay readable. `asset_version_files` keeps the JSON text of a
 * version as received, because `jsonb` reorders object keys and exports return files unchanged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE presets (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      source text NOT NULL,
      latest_version_id text NOT NULL,
      version_no integer NOT NULL CHECK (version_no >= 1),
      deleted_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX presets_account ON presets (account_id, updated_at) WHERE deleted_at IS NULL;
    CREATE TABLE regex_profiles (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      source text NOT NULL,
      latest_version_id text NOT NULL,
      version_no integer NOT NULL CHECK (version_no >= 1),
      script_count integer NOT NULL CHECK (script_count >= 0),
      compat_report jsonb NOT NULL,
      deleted_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX regex_profiles_account ON regex_profiles (account_id, updated_at) WHERE deleted_at IS NULL;
    CREATE TABLE asset_version_files (
      version_id text PRIMARY KEY REFERENCES asset_versions (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      body text NOT NULL
    );
  `,
  );
}
