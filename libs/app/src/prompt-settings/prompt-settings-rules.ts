import { validationError } from '@hearth/domain';
import {
  POST_PROCESSING_MODES,
  type PostProcessingMode,
} from '@hearth/domain/prompt/assembly/post-processing';
import type { PromptMode } from '@hearth/domain/prompt/injections';
import {
  DEFAULT_LOREBOOK_SETTINGS,
  resolveLorebookSettings,
  type LorebookSettings,
} from '@hearth/domain/prompt/lorebook';
import type { MacroEngineKind } from '@hearth/domain/prompt/macros';
import { isValidTimeZone } from '@hearth/domain/prompt/macros/time-format';
import type { SessionPromptSettingsRow } from '@hearth/persistence';

/**
 * A session's prompt settings (issue 4 item 7; docs/decisions.md "Prompt settings"): the values of
 * `PUT /sessions/:id/prompt-runtime/mode`, their checks, their defaults (SillyTavern 1.18 as shipped)
 * and what a turn reads of them.
 */

export type PersonaPosition = 'in_prompt' | 'none';

export const PROMPT_MODES: readonly PromptMode[] = ['compat_strict', 'compat_plus', 'native'];
export const MACRO_ENGINES: readonly MacroEngineKind[] = ['classic', 'v2'];
export const PERSONA_POSITIONS: readonly PersonaPosition[] = ['in_prompt', 'none'];

/** The top-level settings of the route (besides `lorebook`). */
export const PROMPT_SETTING_FIELDS = [
  'prompt_mode',
  'macro_engine',
  'post_processing',
  'timezone',
  'persona_position',
] as const;
export type PromptSettingField = (typeof PROMPT_SETTING_FIELDS)[number];

export interface PromptSettingsValues {
  prompt_mode: PromptMode;
  macro_engine: MacroEngineKind;
  post_processing: PostProcessingMode;
  timezone: string;
  persona_position: PersonaPosition;
  lorebook: LorebookSettings;
}

/**
 * The defaults: SillyTavern 1.18 as a fresh install ships it (chat completion post-processing `''`, the
 * newer macro engine on, persona "in prompt", the world-info values of `DEFAULT_LOREBOOK_SETTINGS`), plus
 * Hearth's own prompt mode default and UTC.
 */
export const PROMPT_SETTINGS_DEFAULTS: Readonly<PromptSettingsValues> = Object.freeze({
  prompt_mode: 'compat_strict',
  macro_engine: 'v2',
  post_processing: 'none',
  timezone: 'UTC',
  persona_position: 'in_prompt',
  lorebook: { ...DEFAULT_LOREBOOK_SETTINGS },
});

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
  /** null clears every lorebook setting; an object sets (value) or clears (null) each named key. */
  lorebook?: Partial<Record<keyof LorebookSettings, unknown>> | null;
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

/**
 * Checks a PUT body. Every problem is a 400 `validation_error` naming its path in `details.fields`
 * (`lorebook.scanDepth`, …); a body without any setting is 400 too.
 */
export function checkPromptSettingsPut(body: Record<string, unknown>): PromptSettingsPatch {
  const present = [...PROMPT_SETTING_FIELDS, 'lorebook'].filter((f) => body[f] !== undefined);
  if (present.length === 0) {
    throw validationError(`Send at least one of ${[...PROMPT_SETTING_FIELDS, 'lorebook'].join(', ')}`, {
      fields: [...PROMPT_SETTING_FIELDS, 'lorebook'].map((field) => ({
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
  const tz = body.timezone;
  if (tz !== undefined && tz !== null) {
    if (typeof tz !== 'string' || tz.length === 0 || !isValidTimeZone(tz))
      problems.push({ field: 'timezone', problems: ['must be an IANA time zone name (or null to reset)'] });
  }
  const lorebook = body.lorebook;
  if (lorebook !== undefined && lorebook !== null) {
    if (!isPlain(lorebook)) {
      problems.push({ field: 'lorebook', problems: ['must be an object (or null to reset every setting)'] });
    } else {
      for (const [key, value] of Object.entries(lorebook)) {
        const field = `lorebook.${key}`;
        if (!(LOREBOOK_KEYS as string[]).includes(key)) {
          problems.push({ field, problems: [`unknown setting; known: ${LOREBOOK_KEYS.join(', ')}`] });
          continue;
        }
        if (value === null) continue;
        const problem = lorebookValueProblem(key as keyof LorebookSettings, value);
        if (problem) problems.push({ field, problems: [problem] });
      }
    }
  }
  if (problems.length > 0)
    throw validationError(problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '), {
      fields: problems,
    });
  const patch: PromptSettingsPatch = {};
  for (const f of PROMPT_SETTING_FIELDS)
    if (body[f] !== undefined) (patch as Record<string, unknown>)[f] = body[f];
  if (lorebook !== undefined) patch.lorebook = lorebook as PromptSettingsPatch['lorebook'];
  return patch;
}

/** The stored settings as written (only set fields; `lorebook` only the written keys). */
export interface StoredPromptSettings {
  prompt_mode: PromptMode | null;
  macro_engine: MacroEngineKind | null;
  post_processing: PostProcessingMode | null;
  timezone: string | null;
  persona_position: PersonaPosition | null;
  lorebook: Partial<LorebookSettings>;
}

export function storedSettings(row: SessionPromptSettingsRow | null | undefined): StoredPromptSettings {
  return {
    prompt_mode: row?.prompt_mode ?? null,
    macro_engine: row?.macro_engine ?? null,
    post_processing: row?.post_processing ?? null,
    timezone: row?.timezone ?? null,
    persona_position: row?.persona_position ?? null,
    lorebook: (isPlain(row?.lorebook_settings) ? row.lorebook_settings : {}) as Partial<LorebookSettings>,
  };
}

/** The stored settings with the patch applied (null clears; an emptied lorebook object stays `{}`). */
export function applyPromptSettingsPatch(
  stored: StoredPromptSettings,
  patch: PromptSettingsPatch,
): StoredPromptSettings {
  const next: StoredPromptSettings = { ...stored, lorebook: { ...stored.lorebook } };
  for (const f of PROMPT_SETTING_FIELDS) {
    const value = patch[f];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[f] = value;
  }
  if (patch.lorebook === null) next.lorebook = {};
  else if (patch.lorebook) {
    for (const [key, value] of Object.entries(patch.lorebook)) {
      if (value === null) delete (next.lorebook as Record<string, unknown>)[key];
      else (next.lorebook as Record<string, unknown>)[key] = value;
    }
  }
  return next;
}

/** Names of the fields whose stored value differs (`lorebook.<key>` for lorebook keys), sorted. */
export function changedPromptSettings(a: StoredPromptSettings, b: StoredPromptSettings): string[] {
  const changed: string[] = PROMPT_SETTING_FIELDS.filter((f) => a[f] !== b[f]);
  const keys = new Set([...Object.keys(a.lorebook), ...Object.keys(b.lorebook)]);
  for (const key of [...keys].sort()) {
    const x = (a.lorebook as Record<string, unknown>)[key];
    const y = (b.lorebook as Record<string, unknown>)[key];
    if (x !== y) changed.push(`lorebook.${key}`);
  }
  return changed;
}

/** The values a turn uses: stored value, else the default. */
export function effectivePromptSettings(stored: StoredPromptSettings): PromptSettingsValues {
  const d = PROMPT_SETTINGS_DEFAULTS;
  return {
    prompt_mode: stored.prompt_mode ?? d.prompt_mode,
    macro_engine: stored.macro_engine ?? d.macro_engine,
    post_processing: stored.post_processing ?? d.post_processing,
    timezone: stored.timezone ?? d.timezone,
    persona_position: stored.persona_position ?? d.persona_position,
    lorebook: resolveLorebookSettings(stored.lorebook).settings,
  };
}
