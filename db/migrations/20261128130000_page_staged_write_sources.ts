import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Page candidates from agents (docs/decisions.md "Page candidates"): `page_staged_writes` rows were
 * only temporary conversation exports; an Agent Job with the `page_staged_write` output target now
 * writes them too.
 *
 * - `source_kind`: `temporary_conversation` (an export) or `agent_job` (an agent run's delivery).
 * - `source_job_id`: the Agent Job that wrote the row (no foreign key: jobs are pruned on their own
 *   schedule and the candidate stays); a retried attempt finds what an earlier one wrote by it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    ALTER TABLE page_staged_writes
      ADD COLUMN source_kind text NOT NULL DEFAULT 'temporary_conversation'
        CHECK (source_kind IN ('temporary_conversation', 'agent_job')),
      ADD COLUMN source_job_id text,
      ADD CONSTRAINT page_staged_writes_job_source
        CHECK ((source_kind = 'agent_job') = (source_job_id IS NOT NULL));
    ALTER TABLE page_staged_writes ALTER COLUMN source_kind DROP DEFAULT;
    CREATE UNIQUE INDEX page_staged_writes_job ON page_staged_writes (source_job_id)
      WHERE source_job_id IS NOT NULL;
  `,
  );
}
