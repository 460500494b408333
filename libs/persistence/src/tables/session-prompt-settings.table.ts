import type { Json } from './core.table';

/**
 * A session's prompt settings (db/migrations/20261122140000_session_prompt_settings.ts,
 * 20261128100000_authors_note_persona_position.ts); null = not set.
 */
export interface SessionPromptSettingsTable {
  session_id: string;
  account_id: string;
  prompt_mode: 'compat_strict' | 'compat_plus' | 'native' | null;
  macro_engine: 'classic' | 'v2' | null;
  post_processing:
    'none' | 'merge' | 'merge_tools' | 'semi' | 'semi_tools' | 'strict' | 'strict_tools' | 'single' | null;
  /** IANA zone name for the time macros. */
  timezone: string | null;
  /** SillyTavern's `persona_description_position`, by name. */
  persona_position: 'in_prompt' | 'top_an' | 'bottom_an' | 'at_depth' | 'none' | null;
  /** With `at_depth`: the in-chat depth (0-10000) and the role of the description. */
  persona_depth: number | null;
  persona_role: 'system' | 'user' | 'assistant' | null;
  /** The written `LorebookSettings` fields only (libs/domain/src/prompt/lorebook/settings.ts). */
  lorebook_settings: Json<Record<string, unknown>>;
  /** The written `AuthorsNote` keys only (libs/domain/src/prompt/engine/authors-note.ts). */
  authors_note: Json<Record<string, unknown>>;
  version: number;
  updated_at: number;
  /** The writer: the account id for a default Client, else the Client id. */
  updated_by: string | null;
}
