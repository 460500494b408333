import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Generation runs (issue 5 items 2-3, docs/decisions.md "Turns and runs"). One row per generation
 * (respond, regenerate, retry, step retry, edit-and-regenerate). The partial unique index is the one
 * lock every kind of turn takes on its branch (respond also holds the `generating` floor); the lease lets
 * a later turn take over a run whose process died. `generation_run_events` keeps the sequenced events
 * of detached runs so a client can reattach from any replica (`GET /runs/:id/events`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE generation_runs (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
      floor_id text,
      run_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
      phase text NOT NULL,
      phase_seq integer NOT NULL DEFAULT 0,
      attempt_no integer NOT NULL DEFAULT 1,
      detached boolean NOT NULL DEFAULT false,
      temp_id text NOT NULL,
      pending_text text NOT NULL DEFAULT '',
      pending_reasoning text,
      last_event_seq integer NOT NULL DEFAULT 0,
      error jsonb,
      lease_expires_at bigint NOT NULL,
      started_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      completed_at bigint
    );
    CREATE UNIQUE INDEX generation_runs_one_running_per_branch ON generation_runs (branch_id) WHERE status = 'running';
    CREATE INDEX generation_runs_session ON generation_runs (session_id, started_at);
    CREATE TABLE generation_run_events (
      run_id text NOT NULL REFERENCES generation_runs (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      type text NOT NULL,
      data text NOT NULL,
      created_at bigint NOT NULL,
      PRIMARY KEY (run_id, seq)
    )
  `,
  );
}
