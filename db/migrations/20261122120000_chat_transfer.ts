import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Chat import and export (spec 3 "Exports", "Imports"; docs/decisions.md "Chat import and export"):
 *
 * - `messages.name` and `messages.extra`: the speaker name and what an import captured beyond the columns
 *   (`extra.ext_jsonl`: the ST line's other fields), so an imported chat exports back field by field.
 * - `chat_transfer_sessions`: per imported session, what the conversation tables have no place for: the
 *   `ext_jsonl` header line, the `nchat` memories (no memory store exists yet) and the file's character
 *   binding.
 * - `chat_transfer_jobs`: the chat side of a `chat.transfer` ledger job (`jobs` row of the same id): kind,
 *   format, options, the caller, the raw import text (cleared once imported) and the result.
 * - `chat_transfer_artifacts`: the file an export job wrote, with its expiry (checked at download).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    ALTER TABLE messages ADD COLUMN name text;
    ALTER TABLE messages ADD COLUMN extra jsonb;

    CREATE TABLE chat_transfer_sessions (
      session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      import_format text NOT NULL CHECK (import_format IN ('nchat', 'ext_jsonl')),
      ext_jsonl_header jsonb,
      memories jsonb,
      character_binding jsonb,
      created_at bigint NOT NULL
    );

    CREATE TABLE chat_transfer_jobs (
      id text PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      created_by_client_id text NOT NULL,
      actor jsonb NOT NULL,
      job_kind text NOT NULL CHECK (job_kind IN ('import_chat', 'export_chat')),
      format text,
      requested_session_id text,
      options jsonb NOT NULL DEFAULT '{}',
      input_text text,
      result_session_id text,
      result jsonb,
      output_expires_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX chat_transfer_jobs_account ON chat_transfer_jobs (account_id, created_at);

    CREATE TABLE chat_transfer_artifacts (
      job_id text PRIMARY KEY REFERENCES chat_transfer_jobs (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      filename_base text NOT NULL,
      extension text NOT NULL,
      content_type text NOT NULL,
      content text NOT NULL,
      byte_count integer NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    )
  `,
  );
}
