import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/** The Project inbox (docs/decisions.md "Inbox"): entries proposed by owner or deriver, decided once by the owner. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE inbox_entries (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      created_by_account_id text NOT NULL,
      created_by_client_id text NOT NULL,
      kind text NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 128),
      title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
      body jsonb NOT NULL,
      body_byte_count integer NOT NULL,
      source_session_id text,
      source_floor_id text,
      source_page_id text,
      derived_output_id text,
      status text NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
      decision_reason text CHECK (decision_reason IS NULL OR char_length(decision_reason) BETWEEN 1 AND 2000),
      decided_by_account_id text,
      decided_by_client_id text,
      decided_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      CHECK ((status = 'pending') = (decided_at IS NULL))
    );
    CREATE INDEX inbox_entries_project ON inbox_entries (project_id, id);
    CREATE INDEX inbox_entries_project_status ON inbox_entries (project_id, status, id);
    CREATE INDEX inbox_entries_source_session ON inbox_entries (source_session_id) WHERE source_session_id IS NOT NULL;
  `,
  );
}
