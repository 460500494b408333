import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * LLM profile bindings (spec 2 "LLM Profiles", docs/decisions.md "Model profiles"): which profile an
 * account uses per instance slot, globally or for one session. The binding key is (account, scope,
 * scope_id, instance_slot). A session binding carries its session in `session_id`, so deleting the
 * session deletes its bindings (spec 2). Profiles get an index on (account, preset_name): names are
 * unique among an account's non-deleted profiles, checked under a per-account advisory lock (rows
 * written before this migration may already repeat a name, so no unique index).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE llm_profile_bindings (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      scope text NOT NULL CHECK (scope IN ('global', 'session')),
      scope_id text NOT NULL,
      session_id text REFERENCES sessions (id) ON DELETE CASCADE,
      instance_slot text NOT NULL CHECK (instance_slot IN ('*', 'narrator', 'director', 'verifier', 'memory')),
      profile_id text NOT NULL REFERENCES llm_profiles (id) ON DELETE CASCADE,
      params jsonb,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      CHECK ((scope = 'global' AND scope_id = 'global' AND session_id IS NULL)
          OR (scope = 'session' AND session_id IS NOT NULL AND scope_id = session_id))
    );
    CREATE UNIQUE INDEX llm_profile_bindings_key ON llm_profile_bindings (account_id, scope, scope_id, instance_slot);
    CREATE INDEX llm_profile_bindings_profile ON llm_profile_bindings (profile_id);
    CREATE INDEX llm_profile_bindings_session ON llm_profile_bindings (session_id) WHERE session_id IS NOT NULL;
    CREATE INDEX llm_profiles_account_preset_name ON llm_profiles (account_id, preset_name)
  `,
  );
}
