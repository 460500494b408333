import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The prompt a committed floor was generated from (spec 2: "a snapshot is written only when a live turn
 * commits, and floor explain and compare read it without recomputing"): one row per floor, written in
 * the commit's transaction by `storeFloorPromptSnapshot`. `snapshot` is the engine's `prompt_snapshot`
 * (messages included); `trace` holds the trimmed runtime trace, the assembly report and token figures.
 * Rows go with their floor (and session).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE floor_prompt_snapshots (
      floor_id text PRIMARY KEY REFERENCES floors (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      snapshot jsonb NOT NULL,
      trace jsonb NOT NULL,
      created_at bigint NOT NULL
    );
    CREATE INDEX floor_prompt_snapshots_session ON floor_prompt_snapshots (session_id);
  `,
  );
}
