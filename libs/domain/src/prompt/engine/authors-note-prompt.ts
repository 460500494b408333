import {
  AUTHORS_NOTE_DEFAULTS,
  AUTHORS_NOTE_POSITIONS,
  isInjectionDepth,
  PERSONA_DEPTH_DEFAULT,
  PERSONA_POSITIONS,
  PERSONA_ROLE_DEFAULT,
  PROMPT_ROLE_NAMES,
  type AuthorsNote,
  type AuthorsNotePosition,
  type PersonaPosition,
  type PromptRoleName,
} from './authors-note';

/**
 * The author's note as SillyTavern 1.18 builds it for one generation, as pure rules:
 *  1. authors-note.js `setFloatingPrompt` decides from the interval whether the note is inserted this time
 *     (`shouldWIAddPrompt`) and sets the note's raw text as extension prompt `2_floating_prompt`;
 *  2. world-info.js `checkWorldInfo` puts the lorebook's author's-note-top/bottom entries around it, only
 *     when `shouldWIAddPrompt`;
 *  3. script.js `addPersonaDescriptionExtensionPrompt` (after the scan) puts the persona description above
 *     or below it (TOP_AN / BOTTOM_AN), again only when `shouldWIAddPrompt`.
 * Placing the result (in chat, or beside the main prompt) is build-prompt's and the assembly's.
 */

/** Why the note is not inserted this generation. */
export type AuthorsNoteScheduleReason =
  'no_character' | 'interval_disabled' | 'no_user_messages' | 'interval_not_reached';

/**
 * ST `setFloatingPrompt`. `userMessages` is `context.chat.filter(m => m.is_user).length` at that moment:
 * every user message of the chat, hidden ones included (hiding sets `is_system`, not `is_user`), plus the
 * message this generation sent. Interval 1 always inserts (even with no user message: ST sets the count to
 * 1); an interval <= 0 or no user message never does; otherwise the note goes in when the count is a
 * multiple of the interval (ST: `count >= interval ? count % interval : interval - count`, inserted at 0).
 * ST skips the whole note outside a chat with a character (`characterId === undefined`, no group).
 */
export function authorsNoteSchedule(
  interval: number,
  userMessages: number,
  hasCharacter: boolean,
): { scheduled: boolean; reason: AuthorsNoteScheduleReason | null } {
  if (!hasCharacter) return { scheduled: false, reason: 'no_character' };
  const count = interval === 1 ? 1 : userMessages;
  if (interval <= 0) return { scheduled: false, reason: 'interval_disabled' };
  if (count <= 0) return { scheduled: false, reason: 'no_user_messages' };
  const untilInsertion = count >= interval ? count % interval : interval - count;
  // `== 0` in ST: a NaN interval never inserts.
  return untilInsertion === 0
    ? { scheduled: true, reason: null }
    : { scheduled: false, reason: 'interval_not_reached' };
}

/** The note with every field usable; a field of the wrong type falls back to ST's default and is reported. */
export function readAuthorsNote(note: AuthorsNote | null | undefined): {
  note: AuthorsNote;
  warnings: Array<{ code: string; message: string }>;
} {
  const warnings: Array<{ code: string; message: string }> = [];
  if (note === null || note === undefined) return { note: { ...AUTHORS_NOTE_DEFAULTS }, warnings };
  const raw = note as Partial<Record<keyof AuthorsNote, unknown>>;
  const pick = <K extends keyof AuthorsNote>(key: K, ok: (v: unknown) => boolean): AuthorsNote[K] => {
    if (raw[key] === undefined) return AUTHORS_NOTE_DEFAULTS[key];
    if (ok(raw[key])) return raw[key] as AuthorsNote[K];
    warnings.push({
      code: 'invalid_authors_note',
      message: `authors_note.${key} ${JSON.stringify(raw[key])} is not usable; ${JSON.stringify(AUTHORS_NOTE_DEFAULTS[key])} is used`,
    });
    return AUTHORS_NOTE_DEFAULTS[key];
  };
  const isNumber = (v: unknown) => typeof v === 'number' && !Number.isNaN(v);
  return {
    note: {
      prompt: pick('prompt', (v) => typeof v === 'string'),
      interval: pick('interval', isNumber),
      depth: pick('depth', isNumber),
      position: pick('position', (v) => AUTHORS_NOTE_POSITIONS.includes(v as never)),
      role: pick('role', (v) => PROMPT_ROLE_NAMES.includes(v as never)),
    },
    warnings,
  };
}

export interface ResolvedPersona {
  position: PersonaPosition;
  /** What decided the position: `position`, the older `in_prompt` flag, or the default. */
  source: 'position' | 'in_prompt' | 'default';
  depth: number;
  role: PromptRoleName;
}

/**
 * Where the persona description goes (ST `power_user.persona_description_position`, `_depth`, `_role`).
 * `position` wins over the older `in_prompt` flag (false = none); the default is `in_prompt` (ST 0).
 */
export function resolvePersona(user: {
  in_prompt?: boolean;
  position?: PersonaPosition;
  depth?: number;
  role?: PromptRoleName;
}): { persona: ResolvedPersona; warnings: Array<{ code: string; message: string }> } {
  const warnings: Array<{ code: string; message: string }> = [];
  let position: PersonaPosition = 'in_prompt';
  let source: ResolvedPersona['source'] = 'default';
  if (user.position !== undefined && PERSONA_POSITIONS.includes(user.position)) {
    position = user.position;
    source = 'position';
  } else {
    if (user.position !== undefined) {
      warnings.push({
        code: 'invalid_persona_position',
        message: `user.position ${JSON.stringify(user.position)} is not a persona position; it is ignored`,
      });
    }
    if (typeof user.in_prompt === 'boolean') {
      position = user.in_prompt ? 'in_prompt' : 'none';
      source = 'in_prompt';
    }
  }
  let depth = PERSONA_DEPTH_DEFAULT;
  if (user.depth !== undefined) {
    if (typeof user.depth === 'number' && !Number.isNaN(user.depth)) depth = user.depth;
    else
      warnings.push({
        code: 'invalid_persona_depth',
        message: `user.depth ${JSON.stringify(user.depth)} is not a number; ${PERSONA_DEPTH_DEFAULT} is used`,
      });
  }
  let role = PERSONA_ROLE_DEFAULT;
  if (user.role !== undefined) {
    if (PROMPT_ROLE_NAMES.includes(user.role)) role = user.role;
    else
      warnings.push({
        code: 'invalid_persona_role',
        message: `user.role ${JSON.stringify(user.role)} is not a role; ${PERSONA_ROLE_DEFAULT} is used`,
      });
  }
  return { persona: { position, source, depth, role }, warnings };
}

export type AuthorsNotePart = 'persona' | 'worldbook_top' | 'note' | 'worldbook_bottom';

/**
 * The note's text once the lorebook and the persona are merged into it (only call it when the note is
 * inserted). Every part is raw: ST expands macros once, where the note is placed.
 *  - ST `checkWorldInfo`: `${top}\n${note}\n${bottom}` with one leading and one trailing newline removed
 *    (`.replace(/(^\n)|(\n$)/g, '')`); top/bottom are the entries joined with `\n`.
 *  - ST `addPersonaDescriptionExtensionPrompt`: `${persona}\n${note}` (TOP_AN) or `${note}\n${persona}`
 *    (BOTTOM_AN), with the raw `power_user.persona_description` and nothing removed.
 */
export function mergeAuthorsNote(input: {
  note: string;
  worldbookTop: string;
  worldbookBottom: string;
  persona: { text: string; side: 'top' | 'bottom' } | null;
}): { text: string; parts: AuthorsNotePart[] } {
  const parts: AuthorsNotePart[] = [];
  if (input.worldbookTop) parts.push('worldbook_top');
  if (input.note) parts.push('note');
  if (input.worldbookBottom) parts.push('worldbook_bottom');
  let text = `${input.worldbookTop}\n${input.note}\n${input.worldbookBottom}`.replace(/(^\n)|(\n$)/g, '');
  if (input.persona && input.persona.text) {
    if (input.persona.side === 'top') {
      text = `${input.persona.text}\n${text}`;
      parts.unshift('persona');
    } else {
      text = `${text}\n${input.persona.text}`;
      parts.push('persona');
    }
  }
  return { text, parts };
}

/** How the chat's author's note went this turn (ST `setFloatingPrompt`, `checkWorldInfo`, the placement). */
export interface AuthorsNoteTrace {
  /** ST `shouldWIAddPrompt`: the interval lets the note in this turn. */
  scheduled: boolean;
  /** Some text of the note reached the prompt (before the history budget, like `in_chat_inserted_entry_ids`). */
  applied: boolean;
  not_applied_reason:
    | AuthorsNoteScheduleReason
    /** Scheduled, but the note, its lorebook entries and the persona are all empty. */
    | 'empty'
    /**
     * `in_chat` at a depth that is not an integer in 0..MAX_INJECTION_DEPTH (or, beside an absolute main,
     * main's depth is not).
     */
    | 'depth_out_of_range'
    /** `after_scenario` / `before_prompt` and the prompt has no `main` to stand beside (ST drops it). */
    | 'no_main_prompt'
    | null;
  interval: number;
  /** User messages ST counts (`context.chat.filter(m => m.is_user)`: hidden ones and this turn's input included). */
  user_message_count: number;
  position: AuthorsNotePosition;
  depth: number;
  role: PromptRoleName;
  /** `in_chat` at its depth, beside `main` in its slot, or `main_injection` beside an absolute main. */
  placed_as: 'in_chat' | 'main' | 'main_injection' | null;
  /** What the note's text is made of, top to bottom (empty when not scheduled). */
  parts: AuthorsNotePart[];
  /** Lorebook entries at the note's top/bottom that were activated but left out: the note is not inserted. */
  worldbook_entries_dropped: number;
}

/** Where the persona description went (ST `persona_description_position`). */
export interface PersonaTrace {
  position: PersonaPosition;
  /** What decided it: `user.position`, the older `user.in_prompt`, or the default (`in_prompt`). */
  source: 'position' | 'in_prompt' | 'default';
  /** For `at_depth` only. */
  depth: number | null;
  role: PromptRoleName | null;
  /** The description reached the prompt by its position (the marker, the author's note, or at depth). */
  placed: boolean;
  not_placed_reason:
    | 'empty_description'
    | 'position_none'
    /** `top_an` / `bottom_an` on a turn the author's note is not inserted. */
    | 'authors_note_not_inserted'
    /** `in_prompt` and the prompt order has no enabled `personaDescription` marker. */
    | 'marker_disabled'
    | 'depth_out_of_range'
    | null;
  /** `at_depth`: the description is a "scan" extension prompt, read by the lorebook scan. */
  scanned: boolean;
}

/** The turn's `runtime_trace.authors_note`, from what the engine decided and what the assembly placed. */
export function traceAuthorsNote(input: {
  note: AuthorsNote;
  schedule: { scheduled: boolean; reason: AuthorsNoteScheduleReason | null };
  userMessageCount: number;
  merged: { text: string; parts: AuthorsNotePart[] };
  /** Source ids the assembly inserted into the history. */
  inChatInserted: ReadonlySet<string>;
  /** Where the assembly put the `authorsNote` prompt "in prompt" (undefined: it had no text by then). */
  inPromptPlacement: 'main' | 'main_injection' | null | undefined;
  /** Lorebook entries activated at the note's top/bottom. */
  worldbookEntries: number;
}): AuthorsNoteTrace {
  const { note, schedule, merged } = input;
  let placedAs: AuthorsNoteTrace['placed_as'] = null;
  let reason: AuthorsNoteTrace['not_applied_reason'] = schedule.reason;
  if (schedule.scheduled) {
    if (!merged.text) reason = 'empty';
    else if (note.position === 'in_chat') {
      if (!isInjectionDepth(note.depth)) reason = 'depth_out_of_range';
      else if (input.inChatInserted.has('authors_note')) placedAs = 'in_chat';
      else reason = 'empty';
    } else if (input.inPromptPlacement === undefined) reason = 'empty';
    else if (input.inPromptPlacement === null) reason = 'no_main_prompt';
    // Beside an absolute main it is one of main's injections: placed only at a depth ST walks.
    else if (input.inPromptPlacement === 'main_injection' && !input.inChatInserted.has('authorsNote'))
      reason = 'depth_out_of_range';
    else placedAs = input.inPromptPlacement;
  }
  return {
    scheduled: schedule.scheduled,
    applied: placedAs !== null,
    not_applied_reason: placedAs !== null ? null : reason,
    interval: note.interval,
    user_message_count: input.userMessageCount,
    position: note.position,
    depth: note.depth,
    role: note.role,
    placed_as: placedAs,
    parts: merged.parts,
    worldbook_entries_dropped: schedule.scheduled ? 0 : input.worldbookEntries,
  };
}

/** The turn's `runtime_trace.persona`. */
export function tracePersona(input: {
  persona: ResolvedPersona;
  /** The description as given (empty: nothing to place). */
  description: string;
  note: AuthorsNoteTrace;
  inChatInserted: ReadonlySet<string>;
  /** The assembled prompt holds the `personaDescription` marker's message. */
  markerPlaced: boolean;
  scanned: boolean;
}): PersonaTrace {
  const { persona } = input;
  let placed = false;
  let reason: PersonaTrace['not_placed_reason'] = null;
  if (!input.description) reason = 'empty_description';
  else if (persona.position === 'none') reason = 'position_none';
  else if (persona.position === 'in_prompt') {
    placed = input.markerPlaced || input.inChatInserted.has('personaDescription');
    if (!placed) reason = 'marker_disabled';
  } else if (persona.position === 'at_depth') {
    placed = input.inChatInserted.has('persona_description');
    if (!placed) reason = isInjectionDepth(persona.depth) ? 'empty_description' : 'depth_out_of_range';
  } else {
    placed = input.note.applied && input.note.parts.includes('persona');
    if (!placed) reason = 'authors_note_not_inserted';
  }
  return {
    position: persona.position,
    source: persona.source,
    depth: persona.position === 'at_depth' ? persona.depth : null,
    role: persona.position === 'at_depth' ? persona.role : null,
    placed,
    not_placed_reason: placed ? null : reason,
    scanned: input.scanned,
  };
}
