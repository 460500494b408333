import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Temporary conversations (spec 2 "Temporary conversation resource"; docs/decisions.md "Temporary
 * conversations").
 *
 * - `sessions.kind`: `standard` (every session so far) or `temporary`. A temporary conversation IS a
 *   session row of kind `temporary`, so floors, pages, messages, runs and the turn machinery work on
 *   it unchanged (on its branch `main`); every normal session route answers 404 for it.
 * - `temporary_conversations`: the conversation's own state, one row per temporary session.
 * - `page_staged_writes`: export candidates (target `page_staged_write`): a copy of a conversation's
 *   output page proposed for a page of its source session; a ledger entry, never a commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    ALTER TABLE sessions ADD COLUMN kind text NOT NULL DEFAULT 'standard'
      CHECK (kind IN ('standard', 'temporary'));

    CREATE TABLE temporary_conversations (
      session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      source_session_id text,
      title text,
      purpose text,
      status text NOT NULL CHECK (status IN ('active', 'finalized', 'discarded', 'cancelled', 'expired')),
      retention_policy text NOT NULL CHECK (retention_policy IN ('delete_on_finalize', 'ttl', 'keep_for_debug')),
      ttl_seconds integer,
      visibility text NOT NULL CHECK (visibility IN ('client_visible', 'internal')),
      source_snapshot jsonb NOT NULL,
      agent_origin jsonb,
      created_by_client_id text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      last_activity_at bigint NOT NULL,
      expires_at bigint,
      finalized_at bigint,
      discarded_at bigint,
      cancelled_at bigint,
      expired_at bigint,
      cleaned_at bigint,
      CHECK ((retention_policy = 'ttl') = (expires_at IS NOT NULL))
    );
    CREATE INDEX temporary_conversations_expiry ON temporary_conversations (expires_at)
      WHERE status = 'active' AND expires_at IS NOT NULL;
    CREATE INDEX temporary_conversations_cleanup ON temporary_conversations (updated_at)
      WHERE status <> 'active' AND cleaned_at IS NULL AND retention_policy <> 'keep_for_debug';

    CREATE TABLE page_staged_writes (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      target_page_id text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
      source_conversation_id text REFERENCES sessions (id) ON DELETE SET NULL,
      source_page_id text,
      target text NOT NULL CHECK (target IN ('page_staged_write')),
      status text NOT NULL CHECK (status IN ('staged')),
      reason text NOT NULL,
      content jsonb NOT NULL,
      created_by_client_id text,
      created_at bigint NOT NULL
    );
    CREATE INDEX page_staged_writes_target ON page_staged_writes (target_page_id, created_at);
  `,
  );
}
