import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The conversation model of issue 5 on top of 20261122001000_conversation_core:
 *
 * - `floor_lines`: a line is a chain of floors where each floor is the first child of its parent in that
 *   line. A new line starts at floor 0 and wherever a floor continues from a parent that already has a
 *   child in the parent's line (a branch made from a middle floor, appending after a reset). A floor's
 *   lineage is its own line up to its floor_no, then the parent line up to the fork floor, and so on, so
 *   a transcript page is a few index range scans on `(line_id, floor_no)`, never a walk of every floor.
 * - One `generating` floor per branch (409 `generation_conflict`), one active page per kind per floor.
 * - `floors.state_snapshot`: variables and lorebook timed-effect state the floor's turn saw (filled by
 *   the turn use cases).
 * - `messages.token_encoding`: the encoding `token_count` was counted with when the message was written.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE floor_lines (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      parent_line_id text REFERENCES floor_lines (id) ON DELETE CASCADE,
      fork_floor_no integer CHECK (fork_floor_no >= 0),
      start_floor_no integer NOT NULL CHECK (start_floor_no >= 0),
      created_at bigint NOT NULL,
      CHECK ((parent_line_id IS NULL) = (fork_floor_no IS NULL)),
      CHECK (fork_floor_no IS NULL OR start_floor_no = fork_floor_no + 1)
    );
    CREATE INDEX floor_lines_session ON floor_lines (session_id);
    CREATE INDEX floor_lines_parent ON floor_lines (parent_line_id);

    ALTER TABLE floors ADD COLUMN line_id text REFERENCES floor_lines (id) ON DELETE CASCADE;
    ALTER TABLE floors ADD COLUMN state_snapshot jsonb;
    CREATE UNIQUE INDEX floors_line_floor_no ON floors (line_id, floor_no);
    CREATE UNIQUE INDEX floors_one_generating_per_branch ON floors (branch_id) WHERE state = 'generating';

    CREATE UNIQUE INDEX pages_one_active_per_kind ON pages (floor_id, page_kind) WHERE is_active;

    ALTER TABLE messages ADD COLUMN token_encoding text;
  `,
  );
}
