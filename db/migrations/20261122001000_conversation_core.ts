import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The conversation tree of spec 2: branches of a session, floors (one turn each) linked to their parent
 * floor, pages (swipes and retries) of a floor and messages of a page. Floors form a tree: a branch's
 * history is the chain of parents from its head floor, so a branch made from floor N shares floors 1..N.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE branches (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      name text NOT NULL,
      source_floor_id text,
      head_floor_id text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (session_id, name)
    );

    CREATE TABLE floors (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      branch_id text NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
      floor_no integer NOT NULL CHECK (floor_no >= 0),
      parent_floor_id text REFERENCES floors (id) ON DELETE CASCADE,
      state text NOT NULL CHECK (state IN ('generating', 'committed', 'failed', 'cancelled')),
      token_in integer NOT NULL DEFAULT 0,
      token_out integer NOT NULL DEFAULT 0,
      reasoning_text text,
      metadata jsonb NOT NULL DEFAULT '{}',
      superseded_at bigint,
      superseded_by_floor_id text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX floors_session ON floors (session_id, floor_no);
    CREATE INDEX floors_branch ON floors (branch_id, floor_no);
    CREATE INDEX floors_parent ON floors (parent_floor_id);

    CREATE TABLE pages (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      floor_id text NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
      page_no integer NOT NULL CHECK (page_no >= 0),
      page_kind text NOT NULL CHECK (page_kind IN ('input', 'output', 'greeting')),
      is_active boolean NOT NULL DEFAULT false,
      version integer NOT NULL DEFAULT 1,
      checksum text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      UNIQUE (floor_id, page_no)
    );
    CREATE INDEX pages_floor ON pages (floor_id, page_kind, version);

    CREATE TABLE messages (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
      floor_id text NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
      page_id text NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
      seq integer NOT NULL,
      role text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'narrator', 'tool')),
      content text NOT NULL,
      content_format text NOT NULL DEFAULT 'text',
      is_hidden boolean NOT NULL DEFAULT false,
      source text NOT NULL DEFAULT 'user',
      token_count integer,
      created_at bigint NOT NULL,
      UNIQUE (page_id, seq)
    );
    CREATE INDEX messages_floor ON messages (floor_id, seq);
  `,
  );
}
