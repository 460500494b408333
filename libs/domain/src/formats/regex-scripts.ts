import { createHash } from 'node:crypto';
import { findRegexImportUnits, findRegexSupport } from '../prompt/regex/script-support';
import { cloneJson, importParseError, isPlainObject, JsonObject } from './format.rules';

/**
 * Regex scripts (external-formats.md §f; spec 3 "POST /import/regex", "GET /export/regex/:id"). Scripts
 * are kept exactly as imported; export fills safe defaults for fields old files lack.
 */

export const REGEX_PLACEMENT = {
  markdown: 0,
  user_input: 1,
  ai_output: 2,
  slash_command: 3,
  send_as: 4,
  world_info: 5,
  reasoning: 6,
} as const;
/** Placements Hearth's runtime applies (user input, AI output, world info, reasoning). */
export const RUNTIME_PLACEMENTS: readonly number[] = [1, 2, 5, 6];

export interface RegexScript {
  id: string;
  scriptName: string;
  findRegex: string;
  replaceString: string;
  trimStrings: string[];
  placement: number[];
  disabled: boolean;
  markdownOnly: boolean;
  promptOnly: boolean;
  runOnEdit: boolean;
  substituteRegex: number;
  minDepth: number | null;
  maxDepth: number | null;
  [field: string]: unknown;
}

export interface RegexCompatReport {
  stored_count: number;
  prompt_executable_count: number;
  persist_executable_count: number;
  display_only_count: number;
  unsupported_runtime_count: number;
  contains_prompt_only: boolean;
  contains_run_on_edit: boolean;
  contains_reasoning: boolean;
  contains_slash_command: boolean;
}

/** `/pattern/flags` or a bare pattern, as ST reads `findRegex`; null when it does not compile. */
export function compileFindRegex(findRegex: string): RegExp | null {
  const match = /^\/([\s\S]+)\/([a-z]*)$/.exec(findRegex);
  try {
    return match ? new RegExp(match[1], match[2]) : new RegExp(findRegex);
  } catch {
    return null;
  }
}

/**
 * The most scripts an imported regex file may have; more is 400 `import_parse_error` before any is read.
 * Not in ST (whose users keep tens to hundreds): a 10 MiB body holds 3,500,000 empty scripts, and the
 * import's compat report and export defaults cost ~10 µs a script (200,000 empty scripts took 2 s each).
 */
export const REGEX_IMPORT_MAX_SCRIPTS = 10_000;

/**
 * The most pattern work an imported regex file may hold: the sum over its scripts of `findRegexImportUnits`
 * (each `findRegex`'s length, or its compiled size when counted repeats make it larger), past which it is
 * 400 `import_parse_error` before any is read. Not in ST. Judging a pattern compiles it (re2js, ~1-6 µs a
 * unit): a 10 MiB file of 2,000 patterns of 5,000 characters took 20 s to import. Equal to the compile
 * budget of one turn (prompt/regex `REGEX_LIMITS.maxCompileWork`), so an imported profile always compiles
 * within a turn; tens of scripts of 2,000 characters fit (real profiles are far below).
 */
export const REGEX_IMPORT_MAX_PATTERN_UNITS = 100_000;

/**
 * 400 `import_parse_error` when a regex file (`data`: a script or an array) has more than
 * REGEX_IMPORT_MAX_SCRIPTS scripts or more than REGEX_IMPORT_MAX_PATTERN_UNITS of patterns.
 */
export function checkRegexImportScripts(input: unknown): void {
  if (Array.isArray(input) && input.length > REGEX_IMPORT_MAX_SCRIPTS) {
    throw importParseError(`regex data has ${input.length} scripts; at most ${REGEX_IMPORT_MAX_SCRIPTS}`, {
      field: 'data',
      max_scripts: REGEX_IMPORT_MAX_SCRIPTS,
    });
  }
  const list: unknown[] = Array.isArray(input) ? input : [input];
  let units = 0;
  for (const script of list) {
    if (!isPlainObject(script)) continue;
    units += findRegexImportUnits(script.findRegex);
    if (units > REGEX_IMPORT_MAX_PATTERN_UNITS) {
      throw importParseError(
        `regex data's findRegex patterns are too large (over ${REGEX_IMPORT_MAX_PATTERN_UNITS} characters, counted repeats expanded)`,
        { field: 'data', max_pattern_units: REGEX_IMPORT_MAX_PATTERN_UNITS },
      );
    }
  }
}

const STRING_FIELDS = ['id', 'scriptName', 'findRegex', 'replaceString'] as const;
const BOOLEAN_FIELDS = ['disabled', 'markdownOnly', 'promptOnly', 'runOnEdit'] as const;

/**
 * Parses a regex file: one script object or an array of them. Wrong types and a `findRegex` that does not
 * compile (checked when macros are not substituted into it, `substituteRegex` 0) are `import_parse_error`.
 */
export function parseRegexScripts(input: unknown): JsonObject[] {
  const list = Array.isArray(input) ? input : [input];
  if (!Array.isArray(input) && !isPlainObject(input)) {
    throw importParseError('regex data must be a script object or an array of script objects');
  }
  return list.map((script, i) => {
    const at = (field: string) => `scripts[${i}].${field}`;
    if (!isPlainObject(script))
      throw importParseError(`scripts[${i}] must be an object`, { field: `scripts[${i}]` });
    for (const field of STRING_FIELDS) {
      const value = script[field];
      if (value !== undefined && value !== null && typeof value !== 'string') {
        throw importParseError(`${at(field)} must be a string`, { field: at(field) });
      }
    }
    for (const field of BOOLEAN_FIELDS) {
      const value = script[field];
      if (value !== undefined && value !== null && typeof value !== 'boolean') {
        throw importParseError(`${at(field)} must be a boolean`, { field: at(field) });
      }
    }
    if (script.trimStrings !== undefined && script.trimStrings !== null) {
      if (!Array.isArray(script.trimStrings) || script.trimStrings.some((s) => typeof s !== 'string')) {
        throw importParseError(`${at('trimStrings')} must be an array of strings`, {
          field: at('trimStrings'),
        });
      }
    }
    if (script.placement !== undefined && script.placement !== null) {
      const placement = Array.isArray(script.placement) ? script.placement : [script.placement];
      if (placement.some((p) => typeof p !== 'number' || !Number.isInteger(p))) {
        throw importParseError(`${at('placement')} must be an array of integers`, { field: at('placement') });
      }
    }
    for (const field of ['minDepth', 'maxDepth']) {
      const value = script[field];
      if (value !== undefined && value !== null && value !== '' && typeof value !== 'number') {
        throw importParseError(`${at(field)} must be a number or null`, { field: at(field) });
      }
    }
    const findRegex = typeof script.findRegex === 'string' ? script.findRegex : '';
    if (
      substituteMode(script.substituteRegex) === 0 &&
      findRegex !== '' &&
      compileFindRegex(findRegex) === null
    ) {
      const named = typeof script.scriptName === 'string' && script.scriptName !== '';
      throw importParseError(
        `${at('findRegex')} does not compile: ${findRegex}${named ? ` (script "${String(script.scriptName)}")` : ''}`,
        { field: at('findRegex'), ...(named ? { script_name: script.scriptName } : {}) },
      );
    }
    return cloneJson(script);
  });
}

function substituteMode(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  return value === true ? 1 : 0;
}

function deterministicId(script: JsonObject, index: number): string {
  const hex = createHash('sha256')
    .update(`${index}:${JSON.stringify(script)}`)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** One script with every export field present; stored values win, unknown fields are kept. */
export function withRegexDefaults(script: JsonObject, index: number): RegexScript {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const bool = (v: unknown) => v === true;
  const depth = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const placement =
    script.placement === undefined || script.placement === null
      ? []
      : Array.isArray(script.placement)
        ? script.placement
        : [script.placement];
  return {
    ...cloneJson(script),
    id: typeof script.id === 'string' && script.id !== '' ? script.id : deterministicId(script, index),
    scriptName: str(script.scriptName),
    findRegex: str(script.findRegex),
    replaceString: str(script.replaceString),
    trimStrings: Array.isArray(script.trimStrings) ? [...(script.trimStrings as string[])] : [],
    placement: [...(placement as number[])],
    disabled: bool(script.disabled),
    markdownOnly: bool(script.markdownOnly),
    promptOnly: bool(script.promptOnly),
    runOnEdit: bool(script.runOnEdit),
    substituteRegex: substituteMode(script.substituteRegex),
    minDepth: depth(script.minDepth),
    maxDepth: depth(script.maxDepth),
  };
}

/** The regex export file: always a JSON array, every script with the spec 3 fields filled. */
export function exportRegexScripts(scripts: JsonObject[]): RegexScript[] {
  return scripts.map((script, index) => withRegexDefaults(script, index));
}

/**
 * A script Hearth can never run: empty find pattern, one Hearth's regex engine cannot compile or run
 * (prompt/regex `findRegexSupport`), or no placement the runtime applies.
 */
export function isUnsupportedRegexScript(script: RegexScript): boolean {
  if (!findRegexSupport(script.findRegex, script.substituteRegex).supported) return true;
  return !script.placement.some((p) => RUNTIME_PLACEMENTS.includes(p));
}
const isUnsupported = isUnsupportedRegexScript;

/**
 * spec 3 `compat_report`. Execution counts cover enabled, supported scripts only: prompt = `promptOnly`
 * (runs while building the prompt), persist = neither `markdownOnly` nor `promptOnly` (rewrites stored
 * text), display = `markdownOnly` without `promptOnly`. The `contains_*` flags look at every script.
 */
export function compatReport(scripts: JsonObject[]): RegexCompatReport {
  const all = exportRegexScripts(scripts);
  // Each pattern is judged once (compiling one can take milliseconds).
  const unsupported = all.map(isUnsupported);
  const runnable = all.filter((s, i) => !s.disabled && !unsupported[i]);
  return {
    stored_count: all.length,
    prompt_executable_count: runnable.filter((s) => s.promptOnly).length,
    persist_executable_count: runnable.filter((s) => !s.markdownOnly && !s.promptOnly).length,
    display_only_count: runnable.filter((s) => s.markdownOnly && !s.promptOnly).length,
    unsupported_runtime_count: unsupported.filter(Boolean).length,
    contains_prompt_only: all.some((s) => s.promptOnly),
    contains_run_on_edit: all.some((s) => s.runOnEdit),
    contains_reasoning: all.some((s) => s.placement.includes(REGEX_PLACEMENT.reasoning)),
    contains_slash_command: all.some((s) => s.placement.includes(REGEX_PLACEMENT.slash_command)),
  };
}
