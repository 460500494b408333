import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Per-account version of everything a model slot resolution reads (docs/decisions.md "Model profiles:
 * resolution cache"): every write to a profile, a binding or a Project LLM override bumps the row of
 * the account in the write's transaction; resolvers cache resolved slots per process and compare the
 * version in the one statement a resolution runs. No row: version 0 (nothing written yet).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE llm_resolution_versions (
      account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
      version bigint NOT NULL
    )
  `,
  );
}
