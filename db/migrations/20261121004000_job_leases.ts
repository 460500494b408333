import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The lease of a `leased`/`running` job: the time its worker must finish or renew by. Past it the
 * reconciler hands the job back to `retry_waiting` (or `dead_letter` when attempts are spent).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    ALTER TABLE jobs ADD COLUMN lease_expires_at bigint;
    CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE status IN ('leased', 'running')
  `,
  );
}
