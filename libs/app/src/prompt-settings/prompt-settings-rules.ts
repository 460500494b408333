import { validationError, type PersonaPlacement } from '@hearth/domain';
import {
  POST_PROCESSING_MODES,
  type PostProcessingMode,
} from '@hearth/domain/prompt/assembly/post-processing';
import {
  AUTHORS_NOTE_DEFAULTS,
  AUTHORS_NOTE_POSITIONS,
  isInjectionDepth,
  MAX_INJECTION_DEPTH,
  PERSONA_DEPTH_DEFAULT,
  PERSONA_POSITIONS,
  PERSONA_ROLE_DEFAULT,
  PROMPT_ROLE_NAMES,
  type AuthorsNote,
  type PersonaPosition,
  type PromptRoleName,
} from '@hearth/domain/prompt/engine/authors-note';
import type { PromptMode } from '@hearth/domain/prompt/injections';
import {
  DEFAULT_LOREBOOK_SETTINGS,
  resolveLorebookSettings,
  type LorebookSettings,
} from '@hearth/domain/prompt/lorebook';
import type { MacroEngineKind } from '@hearth/domain/prompt/macros';
import { isValidTimeZone } from '@hearth/domain/prompt/macros/time-format';
import { isUnstorableText } from '@hearth/domain/text/storable-text';
import type { SessionPromptSettingsRow } from '@hearth/persistence';

/**
 * A session's prompt settings (issue 4 item 7; docs/decisions.md "Prompt settings"): the values of
 * `PUT /sessions/:id/prompt-runtime/mode`, their checks, their defaults (SillyTavern 1.18 as shipped)
 * and what a turn reads of them.
 */

export const PROMPT_MODES: readonly PromptMode[] = ['compat_strict', 'compat_plus', 'native'];
export const MACRO_ENGINES: readonly MacroEngineKind[] = ['classic', 'v2'];

/** The top-level settings of the route (besides the `lorebook` and `authors_note` objects). */
export const PROMPT_SETTING_FIELDS = [
  'prompt_mode',
  'macro_engine',
  'post_processing',
  'timezone',
  'persona_position',
  'persona_depth',
  'persona_role',
] as const;
export type PromptSettingField = (typeof PROMPT_SETTING_FIELDS)[number];
/** The object settings: merged key by key. */
const OBJECT_SETTING_FIELDS = ['lorebook', 'authors_note'] as const;
const ALL_SETTING_FIELDS = [...PROMPT_SETTING_FIELDS, ...OBJECT_SETTING_FIELDS];

/** The persona settings a user card may also give (session > card > default), by the card's key. */
type PersonaSettingField = 'persona_position' | 'persona_depth' | 'persona_role';
const PERSONA_CARD_KEY: Record<PersonaSettingField, keyof PersonaPlacement> = {
  persona_position: 'position',
  persona_depth: 'depth',
  persona_role: 'role',
};

export interface PromptSettingsValues {
  prompt_mode: PromptMode;
  macro_engine: MacroEngineKind;
  post_processing: PostProcessingMode;
  timezone: string;
  persona_position: PersonaPosition;
  persona_depth: number;
  persona_role: PromptRoleName;
  lorebook: LorebookSettings;
  authors_note: AuthorsNote;
}

/**
 * The defaults: SillyTavern 1.18 as a fresh install ships it (chat completion post-processing `''`, the
 * newer macro engine on, persona "in prompt" (depth 2, system for "at depth"), the world-info values of
 * `DEFAULT_LOREBOOK_SETTINGS`, the author's note of `AUTHORS_NOTE_DEFAULTS`: empty, every message, in chat
 * at depth 4 as system), plus Hearth's own prompt mode default and UTC.
 */
export const PROMPT_SETTINGS_DEFAULTS: Readonly<PromptSettingsValues> = Object.freeze({
  prompt_mode: 'compat_strict',
  macro_engine: 'v2',
  post_processing: 'none',
  timezone: 'UTC',
  persona_position: 'in_prompt',
  persona_depth: PERSONA_DEPTH_DEFAULT,
  persona_role: PERSONA_ROLE_DEFAULT,
  lorebook: { ...DEFAULT_LOREBOOK_SETTINGS },
  authors_note: { ...AUTHORS_NOTE_DEFAULTS },
});

/**
 * Hearth's bounds of the author's note: the text at most 100,000 characters (code points; ST has no
 * limit, this keeps one setting far below the row and prompt budgets), no NUL or lone surrogate (Postgres
 * cannot store them); `interval` 0-9999 (ST's input `max`); `depth` 0..MAX_INJECTION_DEPTH.
 */
export const AUTHORS_NOTE_LIMITS = Object.freeze({
  prompt_chars: 100_000,
  interval_max: 9999,
});

const AUTHORS_NOTE_KEYS = Object.keys(AUTHORS_NOTE_DEFAULTS) as Array<keyof AuthorsNote>;

/**
 * Upper bounds for the lorebook numbers, from SillyTavern's world-info sliders (the engine's resolver
 * checks type and lower bound; these keep stored values inside what ST itself lets a user set).
 */
export const LOREBOOK_SETTING_MAX: Partial<Record<keyof LorebookSettings, number>> = {
  scanDepth: 1000,
  minActivations: 100,
  minActivationsDepthMax: 100,
  budgetPercent: 100,
  budgetCap: 65536,
  maxRecursionSteps: 10,
};
/** `budgetPercent` starts at 1 (ST's slider); the others at 0. */
const LOREBOOK_SETTING_MIN: Partial<Record<keyof LorebookSettings, number>> = { budgetPercent: 1 };

const LOREBOOK_KEYS = Object.keys(DEFAULT_LOREBOOK_SETTINGS) as Array<keyof LorebookSettings>;

/** A checked PUT body: per field, a value to store, `null` to clear, absent (undefined) to keep. */
export interface PromptSettingsPatch {
  prompt_mode?: PromptMode | null;
  macro_engine?: MacroEngineKind | null;
  post_processing?: PostProcessingMode | null;
  timezone?: string | null;
  persona_position?: PersonaPosition | null;
  persona_depth?: number | null;
  persona_role?: PromptRoleName | null;
  /** null clears every lorebook setting; an object sets (value) or clears (null) each named key. */
  lorebook?: Partial<Record<keyof LorebookSettings, unknown>> | null;
  /** Like `lorebook`, for the author's note keys. */
  authors_note?: Partial<Record<keyof AuthorsNote, unknown>> | null;
}

type FieldProblem = { field: string; problems: string[] };

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function checkEnum(
  field: string,
  value: unknown,
  allowed: readonly string[],
  problems: FieldProblem[],
): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'string' || !allowed.includes(value))
    problems.push({ field, problems: [`must be one of ${allowed.join(', ')} (or null to reset)`] });
}

/** One lorebook value: the engine resolver's own rule, plus ST's slider bounds. */
function lorebookValueProblem(key: keyof LorebookSettings, value: unknown): string | null {
  if (resolveLorebookSettings({ [key]: value } as Partial<LorebookSettings>).warnings.length > 0)
    return describeLorebookRule(key);
  const max = LOREBOOK_SETTING_MAX[key];
  const min = LOREBOOK_SETTING_MIN[key];
  if (typeof value === 'number' && ((max !== undefined && value > max) || (min !== undefined && value < min)))
    return describeLorebookRule(key);
  return null;
}

function describeLorebookRule(key: keyof LorebookSettings): string {
  const def = DEFAULT_LOREBOOK_SETTINGS[key];
  if (typeof def === 'boolean') return 'must be a boolean (or null to reset)';
  if (key === 'characterStrategy')
    return 'must be one of evenly, character_first, global_first (or null to reset)';
  const min = LOREBOOK_SETTING_MIN[key] ?? 0;
  const kind = key === 'budgetPercent' ? 'a number' : 'an integer';
  return `must be ${kind} from ${min} to ${LOREBOOK_SETTING_MAX[key]} (or null to reset)`;
}

/** The rule of an in-chat depth (the note's and the persona's). */
const DEPTH_RULE = `must be an integer from 0 to ${MAX_INJECTION_DEPTH} (or null to reset)`;

/**
 * An object setting (`lorebook`, `authors_note`) of a PUT body: an object whose keys are known and whose
 * values pass `valueProblem` (null resets a key); each problem is named `<field>.<key>`.
 */
function checkKeyedObject<K extends string>(
  field: string,
  value: unknown,
  keys: readonly K[],
  valueProblem: (key: K, value: unknown) => string | null,
  problems: FieldProblem[],
  noun: 'setting' | 'key',
): void {
  if (value === undefined || value === null) return;
  if (!isPlain(value)) {
    problems.push({ field, problems: [`must be an object (or null to reset every ${noun})`] });
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (!(keys as readonly string[]).includes(key)) {
      problems.push({ field: `${field}.${key}`, problems: [`unknown ${noun}; known: ${keys.join(', ')}`] });
      continue;
    }
    if (v === null) continue;
    const problem = valueProblem(key as K, v);
    if (problem) problems.push({ field: `${field}.${key}`, problems: [problem] });
  }
}

/**
 * One author's note value against Hearth's bounds (`AUTHORS_NOTE_LIMITS`), or the problem; the route,
 * the `ext_jsonl` import (which keeps only the valid keys of a file) and nothing else write the note.
 */
export function authorsNoteValueProblem(key: keyof AuthorsNote, value: unknown): string | null {
  switch (key) {
    case 'prompt':
      if (typeof value !== 'string') return 'must be a string (or null to reset)';
      if ([...value].length > AUTHORS_NOTE_LIMITS.prompt_chars)
        return `must be at most ${AUTHORS_NOTE_LIMITS.prompt_chars} characters`;
      return isUnstorableText(value) ? 'must not contain NUL characters or unpaired surrogates' : null;
    case 'interval':
      return typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= 0 &&
        value <= AUTHORS_NOTE_LIMITS.interval_max
        ? null
        : `must be an integer from 0 to ${AUTHORS_NOTE_LIMITS.interval_max} (or null to reset)`;
    case 'depth':
      return isInjectionDepth(value) ? null : DEPTH_RULE;
    case 'position':
      return (AUTHORS_NOTE_POSITIONS as readonly unknown[]).includes(value)
        ? null
        : `must be one of ${AUTHORS_NOTE_POSITIONS.join(', ')} (or null to reset)`;
    case 'role':
      return (PROMPT_ROLE_NAMES as readonly unknown[]).includes(value)
        ? null
        : `must be one of ${PROMPT_ROLE_NAMES.join(', ')} (or null to reset)`;
  }
}

/** The keys of `note` whose values pass `authorsNoteValueProblem` (an import keeps only these). */
export function validAuthorsNoteKeys(
  note: Partial<Record<keyof AuthorsNote, unknown>>,
): Partial<AuthorsNote> {
  const valid: Partial<Record<keyof AuthorsNote, unknown>> = {};
  for (const key of AUTHORS_NOTE_KEYS) {
    if (note[key] !== undefined && authorsNoteValueProblem(key, note[key]) === null) valid[key] = note[key];
  }
  return valid as Partial<AuthorsNote>;
}

/**
 * Checks a PUT body. Every problem is a 400 `validation_error` naming its path in `details.fields`
 * (`lorebook.scanDepth`, …); a body without any setting is 400 too.
 */
export function checkPromptSettingsPut(body: Record<string, unknown>): PromptSettingsPatch {
  const present = ALL_SETTING_FIELDS.filter((f) => body[f] !== undefined);
  if (present.length === 0) {
    throw validationError(`Send at least one of ${ALL_SETTING_FIELDS.join(', ')}`, {
      fields: ALL_SETTING_FIELDS.map((field) => ({
        field,
        problems: ['at least one setting is required'],
      })),
    });
  }
  const problems: FieldProblem[] = [];
  checkEnum('prompt_mode', body.prompt_mode, PROMPT_MODES, problems);
  checkEnum('macro_engine', body.macro_engine, MACRO_ENGINES, problems);
  checkEnum('post_processing', body.post_processing, POST_PROCESSING_MODES, problems);
  checkEnum('persona_position', body.persona_position, PERSONA_POSITIONS, problems);
  checkEnum('persona_role', body.persona_role, PROMPT_ROLE_NAMES, problems);
  if (
    body.persona_depth !== undefined &&
    body.persona_depth !== null &&
    !isInjectionDepth(body.persona_depth)
  )
    problems.push({ field: 'persona_depth', problems: [DEPTH_RULE] });
  const tz = body.timezone;
  if (tz !== undefined && tz !== null) {
    if (typeof tz !== 'string' || tz.length === 0 || !isValidTimeZone(tz))
      problems.push({ field: 'timezone', problems: ['must be an IANA time zone name (or null to reset)'] });
  }
  const lorebook = body.lorebook;
  checkKeyedObject('lorebook', lorebook, LOREBOOK_KEYS, lorebookValueProblem, problems, 'setting');
  const note = body.authors_note;
  checkKeyedObject('authors_note', note, AUTHORS_NOTE_KEYS, authorsNoteValueProblem, problems, 'key');
  if (problems.length > 0)
    throw validationError(problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '), {
      fields: problems,
    });
  const patch: PromptSettingsPatch = {};
  for (const f of PROMPT_SETTING_FIELDS)
    if (body[f] !== undefined) (patch as Record<string, unknown>)[f] = body[f];
  if (lorebook !== undefined) patch.lorebook = lorebook as PromptSettingsPatch['lorebook'];
  if (note !== undefined) patch.authors_note = note as PromptSettingsPatch['authors_note'];
  return patch;
}

/** The stored settings as written (only set fields; `lorebook` and `authors_note` only the written keys). */
export interface StoredPromptSettings {
  prompt_mode: PromptMode | null;
  macro_engine: MacroEngineKind | null;
  post_processing: PostProcessingMode | null;
  timezone: string | null;
  persona_position: PersonaPosition | null;
  persona_depth: number | null;
  persona_role: PromptRoleName | null;
  lorebook: Partial<LorebookSettings>;
  authors_note: Partial<AuthorsNote>;
}

export function storedSettings(row: SessionPromptSettingsRow | null | undefined): StoredPromptSettings {
  return {
    prompt_mode: row?.prompt_mode ?? null,
    macro_engine: row?.macro_engine ?? null,
    post_processing: row?.post_processing ?? null,
    timezone: row?.timezone ?? null,
    persona_position: row?.persona_position ?? null,
    persona_depth: row?.persona_depth ?? null,
    persona_role: row?.persona_role ?? null,
    lorebook: (isPlain(row?.lorebook_settings) ? row.lorebook_settings : {}) as Partial<LorebookSettings>,
    authors_note: (isPlain(row?.authors_note) ? row.authors_note : {}) as Partial<AuthorsNote>,
  };
}

/** `object` with a key-by-key patch applied (null on a key clears it, a null patch clears them all). */
function mergeKeys<T extends object>(object: T, patch: Record<string, unknown> | null | undefined): T {
  if (patch === null) return {} as T;
  const next = { ...object } as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next as T;
}

/** The stored settings with the patch applied (null clears; an emptied object setting stays `{}`). */
export function applyPromptSettingsPatch(
  stored: StoredPromptSettings,
  patch: PromptSettingsPatch,
): StoredPromptSettings {
  const next: StoredPromptSettings = {
    ...stored,
    lorebook: mergeKeys(stored.lorebook, patch.lorebook),
    authors_note: mergeKeys(stored.authors_note, patch.authors_note),
  };
  for (const f of PROMPT_SETTING_FIELDS) {
    const value = patch[f];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[f] = value;
  }
  return next;
}

/**
 * Names of the fields whose stored value differs (`lorebook.<key>` / `authors_note.<key>` for the keys
 * of the object settings), sorted within each object.
 */
export function changedPromptSettings(a: StoredPromptSettings, b: StoredPromptSettings): string[] {
  const changed: string[] = PROMPT_SETTING_FIELDS.filter((f) => a[f] !== b[f]);
  for (const field of OBJECT_SETTING_FIELDS) {
    const x = a[field] as Record<string, unknown>;
    const y = b[field] as Record<string, unknown>;
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const key of [...keys].sort()) if (x[key] !== y[key]) changed.push(`${field}.${key}`);
  }
  return changed;
}

/**
 * The values a turn uses: stored value, else (the persona's place only) what the session's user card
 * says, else the default (docs/decisions.md "Author's note and persona position").
 */
export function effectivePromptSettings(
  stored: StoredPromptSettings,
  card: PersonaPlacement = {},
): PromptSettingsValues {
  const d = PROMPT_SETTINGS_DEFAULTS;
  return {
    prompt_mode: stored.prompt_mode ?? d.prompt_mode,
    macro_engine: stored.macro_engine ?? d.macro_engine,
    post_processing: stored.post_processing ?? d.post_processing,
    timezone: stored.timezone ?? d.timezone,
    persona_position: stored.persona_position ?? card.position ?? d.persona_position,
    persona_depth: stored.persona_depth ?? card.depth ?? d.persona_depth,
    persona_role: stored.persona_role ?? card.role ?? d.persona_role,
    lorebook: resolveLorebookSettings(stored.lorebook).settings,
    authors_note: { ...d.authors_note, ...stored.authors_note },
  };
}

/** Where a top-level setting of `effectivePromptSettings` comes from (the card only for the persona's). */
export function promptSettingSource(
  stored: StoredPromptSettings,
  card: PersonaPlacement,
  field: PromptSettingField,
): 'session' | 'user_card' | 'default' {
  if (stored[field] !== null) return 'session';
  const cardKey = PERSONA_CARD_KEY[field as PersonaSettingField];
  return cardKey !== undefined && card[cardKey] !== undefined ? 'user_card' : 'default';
}
