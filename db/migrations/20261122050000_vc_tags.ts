import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * VC tags (spec 3 "VC Tag"): named history points of an account, on a floor or on an asset version.
 * Targets are references without foreign keys: the tag routes never touch their target, and a tag keeps
 * its target id if the target goes away. `target_asset_kind` is filled for `asset_version` targets.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE vc_tags (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      name text NOT NULL,
      target_type text NOT NULL CHECK (target_type IN ('floor', 'asset_version')),
      target_id text NOT NULL,
      target_asset_kind text CHECK (target_asset_kind IN ('character', 'preset', 'worldbook', 'regex_profile')),
      session_id text,
      metadata jsonb,
      created_by_operation_id text,
      created_at bigint NOT NULL,
      CHECK ((target_type = 'asset_version') = (target_asset_kind IS NOT NULL)),
      UNIQUE (account_id, name)
    );
    CREATE INDEX vc_tags_account_created ON vc_tags (account_id, created_at, id);
    CREATE INDEX vc_tags_target ON vc_tags (account_id, target_type, target_id);
  `,
  );
}
