/**
 * The chat's author's note and where the persona description goes: SillyTavern keeps the note in
 * `chat_metadata` (`note_prompt`, `note_interval`, `note_depth`, `note_position`, `note_role`) and the
 * persona's place in its persona descriptor (`position`, `depth`, `role`). These are Hearth's names for
 * them (docs/decisions.md "Author's note and persona position").
 */

export type PromptRoleName = 'system' | 'user' | 'assistant';
/** The roles in ST's `extension_prompt_roles` order (SYSTEM 0, USER 1, ASSISTANT 2). */
export const PROMPT_ROLE_NAMES: readonly PromptRoleName[] = ['system', 'user', 'assistant'];

/**
 * ST `persona_description_positions`: IN_PROMPT 0 (and the deprecated AFTER_CHAR 1, which ST migrates to
 * 0), TOP_AN 2, BOTTOM_AN 3, AT_DEPTH 4, NONE 9.
 */
export type PersonaPosition = 'in_prompt' | 'top_an' | 'bottom_an' | 'at_depth' | 'none';
export const PERSONA_POSITIONS: readonly PersonaPosition[] = [
  'in_prompt',
  'top_an',
  'bottom_an',
  'at_depth',
  'none',
];

/** ST `extension_prompt_types` of the note: IN_PROMPT 0 (after the scenario), IN_CHAT 1, BEFORE_PROMPT 2. */
export type AuthorsNotePosition = 'after_scenario' | 'in_chat' | 'before_prompt';
export const AUTHORS_NOTE_POSITIONS: readonly AuthorsNotePosition[] = [
  'after_scenario',
  'in_chat',
  'before_prompt',
];

export interface AuthorsNote {
  /** The note's text (macros are expanded at assembly, as ST does). */
  prompt: string;
  /** Insert every N user messages; 1 = always, 0 = never (ST `note_interval`). */
  interval: number;
  /** In-chat depth when `position` is `in_chat` (ST `note_depth`). */
  depth: number;
  position: AuthorsNotePosition;
  role: PromptRoleName;
}

/** ST's defaults (`extension_settings.note` as a fresh install has it): an empty note every message, depth 4, in chat, system. */
export const AUTHORS_NOTE_DEFAULTS: Readonly<AuthorsNote> = Object.freeze({
  prompt: '',
  interval: 1,
  depth: 4,
  position: 'in_chat',
  role: 'system',
});

/** ST `power_user.persona_description_depth` / `_role` defaults (used with `at_depth`). */
export const PERSONA_DEPTH_DEFAULT = 2;
export const PERSONA_ROLE_DEFAULT: PromptRoleName = 'system';

/** ST `MAX_INJECTION_DEPTH`: the deepest in-chat injection it places. */
export const MAX_INJECTION_DEPTH = 10000;

/**
 * ST `populationInjectionPrompts` walks depths 0..MAX_INJECTION_DEPTH and `getExtensionPrompt` matches
 * `x.depth === depth`: only an integer in that range is ever placed (the settings route and a card
 * snapshot accept the same range).
 */
export function isInjectionDepth(depth: unknown): depth is number {
  return typeof depth === 'number' && Number.isInteger(depth) && depth >= 0 && depth <= MAX_INJECTION_DEPTH;
}
