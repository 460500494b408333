/**
 * Lorebook (world info) scan settings. SillyTavern keeps them as global settings (external-formats.md §c
 * "Global settings", §h); Hearth gives each a home (docs/decisions.md "Prompt engine: lorebook"). The values
 * here are what a fresh SillyTavern 1.18 install ships (§j: recursion on and whole-word matching on, unlike
 * the code defaults).
 */

/** §d.1: how global and character lore are mixed (ST `world_info_character_strategy`). */
export type LorebookCharacterStrategy = 'evenly' | 'character_first' | 'global_first';

export interface LorebookSettings {
  /** `world_info_depth`: messages scanned (entry `scanDepth` wins). */
  scanDepth: number;
  /** `world_info_min_activations` (0 = off). */
  minActivations: number;
  /** `world_info_min_activations_depth_max` (0 = up to the chat length). */
  minActivationsDepthMax: number;
  /** `world_info_budget`: percent of the max prompt tokens. */
  budgetPercent: number;
  /** `world_info_budget_cap`: tokens, 0 = no cap. */
  budgetCap: number;
  /** `world_info_include_names`: scan `Name: text` instead of `text`. */
  includeNames: boolean;
  /** `world_info_recursive`. */
  recursive: boolean;
  /** `world_info_max_recursion_steps`: caps the number of passes (0 = unlimited). */
  maxRecursionSteps: number;
  /** `world_info_case_sensitive` (entry `caseSensitive` wins). */
  caseSensitive: boolean;
  /** `world_info_match_whole_words` (entry `matchWholeWords` wins). */
  matchWholeWords: boolean;
  /** `world_info_use_group_scoring` (entry `useGroupScoring` wins for that entry). */
  useGroupScoring: boolean;
  /** `world_info_character_strategy`. */
  characterStrategy: LorebookCharacterStrategy;
}

/** SillyTavern 1.18 as shipped (§c defaults, with §j's shipped recursion and whole words). */
export const DEFAULT_LOREBOOK_SETTINGS: Readonly<LorebookSettings> = Object.freeze({
  scanDepth: 2,
  minActivations: 0,
  minActivationsDepthMax: 0,
  budgetPercent: 25,
  budgetCap: 0,
  includeNames: true,
  recursive: true,
  maxRecursionSteps: 0,
  caseSensitive: false,
  matchWholeWords: true,
  useGroupScoring: false,
  characterStrategy: 'character_first',
});

/** §c constants. */
export const LOREBOOK_MAX_SCAN_DEPTH = 1000;
export const LOREBOOK_DEFAULT_DEPTH = 4;
export const LOREBOOK_DEFAULT_WEIGHT = 100;

export interface LorebookSettingsWarning {
  code: 'invalid_lorebook_setting';
  message: string;
  setting: string;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Settings over the defaults; a value of the wrong type or out of range falls back to the default and is
 * reported (the engine never throws on bad input).
 */
export function resolveLorebookSettings(partial: Partial<LorebookSettings> | undefined): {
  settings: LorebookSettings;
  warnings: LorebookSettingsWarning[];
} {
  const settings: LorebookSettings = { ...DEFAULT_LOREBOOK_SETTINGS };
  const warnings: LorebookSettingsWarning[] = [];
  if (!partial || typeof partial !== 'object') return { settings, warnings };
  const take = <K extends keyof LorebookSettings>(key: K, ok: (v: unknown) => boolean) => {
    const value = partial[key];
    if (value === undefined) return;
    if (ok(value)) settings[key] = value as LorebookSettings[K];
    else
      warnings.push({
        code: 'invalid_lorebook_setting',
        message: `lorebook setting ${key} is invalid (${JSON.stringify(value)}); using ${JSON.stringify(settings[key])}`,
        setting: key,
      });
  };
  take('scanDepth', (v) => isInt(v) && v >= 0 && v <= LOREBOOK_MAX_SCAN_DEPTH);
  take('minActivations', (v) => isInt(v) && v >= 0);
  take('minActivationsDepthMax', (v) => isInt(v) && v >= 0);
  take('budgetPercent', (v) => isNum(v) && v >= 0);
  take('budgetCap', (v) => isInt(v) && v >= 0);
  take('includeNames', (v) => typeof v === 'boolean');
  take('recursive', (v) => typeof v === 'boolean');
  take('maxRecursionSteps', (v) => isInt(v) && v >= 0);
  take('caseSensitive', (v) => typeof v === 'boolean');
  take('matchWholeWords', (v) => typeof v === 'boolean');
  take('useGroupScoring', (v) => typeof v === 'boolean');
  take('characterStrategy', (v) => v === 'evenly' || v === 'character_first' || v === 'global_first');
  return { settings, warnings };
}

/** §d.5: budget = round(percent × max prompt tokens / 100), at least 1, capped when the cap is > 0. */
export function lorebookBudget(settings: LorebookSettings, maxPromptTokens: number): number {
  const tokens = Number.isFinite(maxPromptTokens) ? maxPromptTokens : 0;
  let budget = Math.round((settings.budgetPercent * tokens) / 100) || 1;
  if (settings.budgetCap > 0 && budget > settings.budgetCap) budget = settings.budgetCap;
  return budget;
}
