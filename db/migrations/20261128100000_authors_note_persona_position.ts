import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * The chat's author's note and the persona's place (docs/decisions.md "Author's note and persona
 * position"), on the per-session prompt settings row: `persona_position` takes SillyTavern's five
 * places (`persona_description_positions`), `persona_depth` / `persona_role` say where `at_depth` puts
 * the description, and `authors_note` holds the written keys of the note (`prompt`, `interval`, `depth`,
 * `position`, `role`; ST `chat_metadata.note_*`) as `lorebook_settings` holds the lorebook's. Null / a
 * missing key is "not set". The settings rules check values first; the CHECKs are the last line.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    ALTER TABLE session_prompt_settings DROP CONSTRAINT session_prompt_settings_persona_position_check;
    ALTER TABLE session_prompt_settings ADD CONSTRAINT session_prompt_settings_persona_position_check
      CHECK (persona_position IN ('in_prompt', 'top_an', 'bottom_an', 'at_depth', 'none'));
    ALTER TABLE session_prompt_settings
      ADD COLUMN persona_depth integer CHECK (persona_depth BETWEEN 0 AND 10000),
      ADD COLUMN persona_role text CHECK (persona_role IN ('system', 'user', 'assistant')),
      ADD COLUMN authors_note jsonb NOT NULL DEFAULT '{}'::jsonb
  `,
  );
}
