import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The per-session prompt settings (issue 4 item 7; docs/decisions.md "Prompt settings"): one optional row
 * per session, written by `PUT /sessions/:id/prompt-runtime/mode`. A null column (or a missing lorebook
 * key) is "not set": the turn uses SillyTavern's shipped default. `version` is bumped by every write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE session_prompt_settings (
      session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      prompt_mode text CHECK (prompt_mode IN ('compat_strict', 'compat_plus', 'native')),
      macro_engine text CHECK (macro_engine IN ('classic', 'v2')),
      post_processing text CHECK (post_processing IN ('none', 'merge', 'merge_tools', 'semi', 'semi_tools', 'strict', 'strict_tools', 'single')),
      timezone text,
      persona_position text CHECK (persona_position IN ('in_prompt', 'none')),
      lorebook_settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      version integer NOT NULL CHECK (version >= 1),
      updated_at bigint NOT NULL,
      updated_by text
    );
    CREATE INDEX session_prompt_settings_account ON session_prompt_settings (account_id);
  `,
  );
}
