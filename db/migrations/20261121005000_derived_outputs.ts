import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/** Derived outputs (spec 1 "Derived Output"): Project-scoped JSON results, archived rather than deleted. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE derived_outputs (
      id text PRIMARY KEY,
      workspace_id text NOT NULL,
      project_id text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      owner_account_id text NOT NULL,
      created_by_client_id text NOT NULL,
      source_session_id text,
      source_floor_id text,
      source_page_id text,
      domain text NOT NULL CHECK (char_length(domain) BETWEEN 1 AND 128),
      value jsonb NOT NULL,
      value_byte_count integer NOT NULL,
      status text NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX derived_outputs_project ON derived_outputs (project_id, id);
    CREATE INDEX derived_outputs_project_domain ON derived_outputs (project_id, domain, id);
    CREATE INDEX derived_outputs_source_session ON derived_outputs (source_session_id) WHERE source_session_id IS NOT NULL;
  `,
  );
}
