import type { AuthorsNote } from '../prompt/engine/authors-note';
import { cloneJson, isPlainObject, type JsonObject } from './format.rules';
import { ST_NOTE_POSITIONS, ST_PROMPT_ROLES, stEnumName } from './st-prompt-enums';

/**
 * The chat's author's note in an `ext_jsonl` header: SillyTavern keeps it in `chat_metadata` under
 * authors-note.js `metadata_keys` (`note_prompt`, `note_interval`, `note_depth`, `note_position` 0/1/2,
 * `note_role` 0/1/2); Hearth keeps it in the session's prompt settings (`authors_note`).
 */

/** ST's `chat_metadata` key of each note key (authors-note.js `metadata_keys`). */
export const NOTE_METADATA_KEYS: Readonly<Record<keyof AuthorsNote, string>> = Object.freeze({
  prompt: 'note_prompt',
  interval: 'note_interval',
  depth: 'note_depth',
  position: 'note_position',
  role: 'note_role',
});

const NOTE_KEYS = Object.keys(NOTE_METADATA_KEYS) as Array<keyof AuthorsNote>;

/**
 * The note keys a header's `chat_metadata` holds with a value of ST's own type: `note_prompt` a string,
 * `note_interval` / `note_depth` integers (ST stores `Number(input)`), `note_position` / `note_role` one of
 * ST's numbers (read as Hearth's names). Absent keys and values of another type are left out; Hearth's
 * bounds (text length, interval and depth ranges) are the caller's to judge.
 */
export function authorsNoteOfHeader(header: JsonObject | null | undefined): Partial<AuthorsNote> {
  const metadata = header?.chat_metadata;
  if (!isPlainObject(metadata)) return {};
  const note: Partial<AuthorsNote> = {};
  const prompt = metadata[NOTE_METADATA_KEYS.prompt];
  if (typeof prompt === 'string') note.prompt = prompt;
  for (const key of ['interval', 'depth'] as const) {
    const value = metadata[NOTE_METADATA_KEYS[key]];
    if (typeof value === 'number' && Number.isInteger(value)) note[key] = value;
  }
  const position = stEnumName(ST_NOTE_POSITIONS, metadata[NOTE_METADATA_KEYS.position]);
  if (position) note.position = position;
  const role = stEnumName(ST_PROMPT_ROLES, metadata[NOTE_METADATA_KEYS.role]);
  if (role) note.role = role;
  return note;
}

/**
 * `header` with the set keys of `note` written over its `chat_metadata.note_*` (as ST numbers), the
 * header's other fields and key order kept; a copy, never the input. A header without a `chat_metadata`
 * object gets one. Without any set key the header is returned as it was.
 */
export function withAuthorsNote(
  header: JsonObject,
  note: Partial<AuthorsNote> | null | undefined,
): JsonObject {
  const keys = NOTE_KEYS.filter((key) => note?.[key] !== undefined && note?.[key] !== null);
  if (keys.length === 0) return header;
  const out = cloneJson(header);
  const metadata: JsonObject = isPlainObject(out.chat_metadata) ? out.chat_metadata : {};
  for (const key of keys) {
    const value = note![key]!;
    metadata[NOTE_METADATA_KEYS[key]] =
      key === 'position'
        ? ST_NOTE_POSITIONS.indexOf(value as AuthorsNote['position'])
        : key === 'role'
          ? ST_PROMPT_ROLES.indexOf(value as AuthorsNote['role'])
          : value;
  }
  out.chat_metadata = metadata;
  return out;
}
