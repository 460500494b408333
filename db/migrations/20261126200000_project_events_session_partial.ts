import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The session index of `project_events` holds only events that have a session: every reader filters
 * it with `session_id = <a session>`, and most events of a Project (derived outputs without a source,
 * members, settings, inbox) have none, so each of those writes one index entry less
 * (docs/decisions.md "HTTP pipeline cost"). Rebuilt in place: the build blocks event writes for as
 * long as it takes on the existing rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    DROP INDEX project_events_session;
    CREATE INDEX project_events_session ON project_events (project_id, session_id, sequence)
      WHERE session_id IS NOT NULL
  `,
  );
}
