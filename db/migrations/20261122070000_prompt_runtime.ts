import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Spec 2's persistent prompt runtime state of a session (docs/decisions.md "Prompt runtime policy and
 * injections"):
 *
 * - `prompt_policies`: the written fields of the policy at session level (`branch_id` null) and of each
 *   branch overlay, with an envelope `version` bumped by every write (optimistic concurrency).
 * - `prompt_injections`: persistent injections at session or branch scope; `expires_at` is
 *   `created_at + ttl_ms`, and the maintenance scan deletes expired rows.
 *
 * Both go with their session (and branch).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE prompt_policies (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text REFERENCES branches (id) ON DELETE CASCADE,
      value jsonb NOT NULL,
      version integer NOT NULL CHECK (version >= 1),
      updated_at bigint NOT NULL,
      updated_by text
    );
    CREATE UNIQUE INDEX prompt_policies_scope ON prompt_policies (session_id, (coalesce(branch_id, '')));
    CREATE INDEX prompt_policies_branch ON prompt_policies (branch_id) WHERE branch_id IS NOT NULL;

    CREATE TABLE prompt_injections (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text REFERENCES branches (id) ON DELETE CASCADE,
      scope text NOT NULL CHECK (scope IN ('session', 'branch')),
      source_kind text NOT NULL CHECK (source_kind IN ('client_injection', 'agent_injection', 'debug_injection', 'system_override')),
      title text NOT NULL,
      content text NOT NULL,
      placement text NOT NULL,
      placement_params jsonb,
      "order" integer NOT NULL DEFAULT 100,
      enabled boolean NOT NULL DEFAULT true,
      mode_scope text CHECK (mode_scope IN ('compat_strict', 'compat_plus', 'native')),
      ttl_ms bigint CHECK (ttl_ms > 0),
      expires_at bigint,
      created_by text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      CHECK ((scope = 'session') = (branch_id IS NULL)),
      CHECK ((ttl_ms IS NULL) = (expires_at IS NULL))
    );
    CREATE INDEX prompt_injections_scope ON prompt_injections (session_id, branch_id, id);
    CREATE INDEX prompt_injections_branch ON prompt_injections (branch_id) WHERE branch_id IS NOT NULL;
    CREATE INDEX prompt_injections_expiry ON prompt_injections (expires_at) WHERE expires_at IS NOT NULL;
  `,
  );
}
