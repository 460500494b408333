import {
  PROMPT_ROLE_NAMES,
  type AuthorsNotePosition,
  type PersonaPosition,
  type PromptRoleName,
} from '../prompt/engine/authors-note';

/**
 * SillyTavern's numbered prompt enums and Hearth's names for them (docs/decisions.md "Author's note and
 * persona position"). ST files and settings store the numbers; Hearth's routes and tables the names.
 */

/** ST `extension_prompt_roles`: SYSTEM 0, USER 1, ASSISTANT 2 (the note's and the persona's role). */
export const ST_PROMPT_ROLES: readonly PromptRoleName[] = PROMPT_ROLE_NAMES;

/** ST `extension_prompt_types` as the note uses them: IN_PROMPT 0, IN_CHAT 1, BEFORE_PROMPT 2. */
export const ST_NOTE_POSITIONS: readonly AuthorsNotePosition[] = [
  'after_scenario',
  'in_chat',
  'before_prompt',
];

/**
 * ST `persona_description_positions`: IN_PROMPT 0, AFTER_CHAR 1 (deprecated; ST's persona migration
 * reads it as IN_PROMPT), TOP_AN 2, BOTTOM_AN 3, AT_DEPTH 4, NONE 9.
 */
export const ST_PERSONA_POSITIONS: Readonly<Record<number, PersonaPosition>> = Object.freeze({
  0: 'in_prompt',
  1: 'in_prompt',
  2: 'top_an',
  3: 'bottom_an',
  4: 'at_depth',
  9: 'none',
});

/** The name of an ST enum number (an integer index of `names`), or undefined. */
export function stEnumName<T>(names: readonly T[], value: unknown): T | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < names.length
    ? names[value]
    : undefined;
}
