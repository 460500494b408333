import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Sessions imported from SillyTavern `ext_jsonl` files before `20261128100000_authors_note_persona_position`
 * kept their author's note only in the stored header (`chat_transfer_sessions.ext_jsonl_header`,
 * `chat_metadata.note_*`). Their turns would use the default note, and their export would write the
 * defaults over the header's note (docs/decisions.md "Author's note and persona position"). This copies
 * the header's valid note keys into the session's prompt settings, as an import does now: the same rules
 * as `validAuthorsNoteKeys(authorsNoteOfHeader(header))` (`note_prompt` a string of at most 100,000 code
 * points, `note_interval` an integer 0-9999, `note_depth` an integer 0-10000, `note_position` and
 * `note_role` ST's numbers 0-2). A session without a settings row gets one (version 1); a session with
 * one keeps every key it wrote itself and gets a new version.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    WITH header AS (
      SELECT t.session_id, t.account_id, t.ext_jsonl_header -> 'chat_metadata' AS m
      FROM chat_transfer_sessions t
      WHERE t.import_format = 'ext_jsonl'
        AND jsonb_typeof(t.ext_jsonl_header -> 'chat_metadata') = 'object'
    ),
    numbers AS (
      SELECT session_id, account_id, m,
        CASE WHEN jsonb_typeof(m -> 'note_interval') = 'number' THEN (m ->> 'note_interval')::numeric END AS interval_n,
        CASE WHEN jsonb_typeof(m -> 'note_depth') = 'number' THEN (m ->> 'note_depth')::numeric END AS depth_n,
        CASE WHEN jsonb_typeof(m -> 'note_position') = 'number' THEN (m ->> 'note_position')::numeric END AS position_n,
        CASE WHEN jsonb_typeof(m -> 'note_role') = 'number' THEN (m ->> 'note_role')::numeric END AS role_n
      FROM header
    ),
    note AS (
      SELECT session_id, account_id, jsonb_strip_nulls(jsonb_build_object(
        'prompt', CASE WHEN jsonb_typeof(m -> 'note_prompt') = 'string'
                        AND char_length(m ->> 'note_prompt') <= 100000 THEN m -> 'note_prompt' END,
        'interval', CASE WHEN interval_n % 1 = 0 AND interval_n BETWEEN 0 AND 9999
                         THEN to_jsonb(interval_n::integer) END,
        'depth', CASE WHEN depth_n % 1 = 0 AND depth_n BETWEEN 0 AND 10000 THEN to_jsonb(depth_n::integer) END,
        'position', CASE position_n WHEN 0 THEN to_jsonb('after_scenario'::text)
                                    WHEN 1 THEN to_jsonb('in_chat'::text)
                                    WHEN 2 THEN to_jsonb('before_prompt'::text) END,
        'role', CASE role_n WHEN 0 THEN to_jsonb('system'::text)
                            WHEN 1 THEN to_jsonb('user'::text)
                            WHEN 2 THEN to_jsonb('assistant'::text) END
      )) AS authors_note
      FROM numbers
    )
    INSERT INTO session_prompt_settings AS s
      (session_id, account_id, lorebook_settings, authors_note, version, updated_at, updated_by)
    SELECT session_id, account_id, '{}'::jsonb, authors_note, 1,
      (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL
    FROM note
    WHERE authors_note <> '{}'::jsonb
    ON CONFLICT (session_id) DO UPDATE
      SET authors_note = EXCLUDED.authors_note || s.authors_note,
          version = s.version + 1,
          updated_at = EXCLUDED.updated_at
      WHERE EXCLUDED.authors_note || s.authors_note <> s.authors_note
  `,
  );
}
