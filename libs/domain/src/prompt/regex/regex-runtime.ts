import type { JsonObject } from '../../formats/format.rules';
import { isUnsupportedRegexScript, RegexScript, withRegexDefaults } from '../../formats/regex-scripts';
import { findRegexSupport } from './script-support';
import { compileUserRegex, parseScriptRegex, UserRegexEngine, UserRegexMatch } from './user-regex';

/**
 * Regex scripts applied to one string as SillyTavern 1.18 does it (external-formats.md §f; ST
 * `getRegexedString` + `runRegexScript`). Pure and synchronous; never throws: a script that cannot run is
 * skipped with a warning and the others still apply.
 */

/** ST `regex_placement` (§f "placement values"). */
export const REGEX_PLACEMENTS = {
  user_input: 1,
  ai_output: 2,
  slash_command: 3,
  world_info: 5,
  reasoning: 6,
} as const;

/** Where a script lives; run order is global, then preset, then character (§f "Run order"). */
export type RegexScriptScope = 'global' | 'preset' | 'character';
const SCOPE_ORDER: Record<RegexScriptScope, number> = { global: 0, preset: 1, character: 2 };

export interface ScopedRegexScript {
  script: JsonObject | RegexScript;
  /** Absent = the list order alone decides. */
  scope?: RegexScriptScope;
}

/**
 * `stored`: the text is being stored (user input when sent, AI output when received; ST: neither isMarkdown
 * nor isPrompt) — scripts with neither `markdownOnly` nor `promptOnly` run. `prompt`: building the prompt —
 * `promptOnly` scripts run. `display`: rendering — `markdownOnly` scripts run.
 */
export type RegexRunMode = 'stored' | 'prompt' | 'display';

/**
 * The caller's macro engine: substitutes macros in `text`; `escapeValue`, when given, is applied to each
 * substituted macro value (ST `substituteParamsExtended(text, {}, sanitizeRegexMacro)` for
 * `substituteRegex` 2).
 */
export type RegexMacroSubstitute = (text: string, escapeValue?: (value: string) => string) => string;

export interface RegexRunContext {
  placement: number;
  mode: RegexRunMode;
  /** The user edited a message: only `runOnEdit` scripts run. */
  isEdit?: boolean;
  /** Messages from the end (0 = last message, −1 = the message being continued); only with prompt building. */
  depth?: number;
  substitute?: RegexMacroSubstitute;
}

export interface RegexRuleApplied {
  id: string;
  name: string;
  scope: RegexScriptScope | null;
  engine: UserRegexEngine;
  /** Replacements made (≥ 1: a script that matched nothing is not listed). */
  matches: number;
}

export type RegexWarningCode = 'regex_invalid' | 'regex_unsupported' | 'regex_guard_exceeded';

export interface RegexRunWarning {
  code: RegexWarningCode;
  script_id: string;
  script_name: string;
  message: string;
}

export interface RegexRunResult {
  text: string;
  applied: RegexRuleApplied[];
  /** `applied` names in order (runtime_trace / prompt_snapshot `regex_pre_rule_names`, `regex_post_rule_names`). */
  appliedNames: string[];
  warnings: RegexRunWarning[];
}

/** ST `sanitizeRegexMacro`: a macro value made literal inside a pattern (`substituteRegex` 2). */
export function sanitizeRegexMacro(value: string): string {
  if (!value || typeof value !== 'string') return value;
  return value.replace(/[\n\r\t\v\f\0.^$*+?{}[\]\\/|()]/g, (s) => {
    switch (s) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      case '\v':
        return '\\v';
      case '\f':
        return '\\f';
      case '\0':
        return '\\0';
      default:
        return `\\${s}`;
    }
  });
}

const identity: RegexMacroSubstitute = (text) => text;

function normalise(entry: ScopedRegexScript | JsonObject | RegexScript, index: number) {
  const scoped =
    entry &&
    typeof entry === 'object' &&
    'script' in entry &&
    typeof entry.script === 'object' &&
    entry.script !== null
      ? (entry as ScopedRegexScript)
      : { script: entry as JsonObject };
  const raw = (scoped.script ?? {}) as JsonObject;
  return { raw, script: withRegexDefaults(raw, index), scope: scoped.scope ?? null, index };
}

/** ST's `isNaN(v) || v === null` guard, then the numeric comparison JS would make. */
function depthBound(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isNaN(n) ? null : n;
}

/** Orders scripts as ST runs them: global, then preset, then character; list order inside each scope. */
export function orderRegexScripts<T extends { scope: RegexScriptScope | null; index: number }>(
  items: T[],
): T[] {
  return [...items].sort(
    (a, b) =>
      (a.scope ? SCOPE_ORDER[a.scope] : 0) - (b.scope ? SCOPE_ORDER[b.scope] : 0) || a.index - b.index,
  );
}

/** Would this script run on this string in this context (ST `getRegexedString` gates, §f)? */
function gateOpen(script: RegexScript, raw: JsonObject, ctx: RegexRunContext): boolean {
  const isMarkdown = ctx.mode === 'display';
  const isPrompt = ctx.mode === 'prompt';
  const modeOk =
    (script.markdownOnly && isMarkdown) ||
    (script.promptOnly && isPrompt) ||
    (!script.markdownOnly && !script.promptOnly && !isMarkdown && !isPrompt);
  if (!modeOk) return false;
  if (ctx.isEdit && !script.runOnEdit) return false;
  if (typeof ctx.depth === 'number') {
    // The raw values, as ST compares them (a numeric string still counts).
    const min = depthBound(raw.minDepth);
    if (min !== null && min >= -1 && ctx.depth < min) return false;
    const max = depthBound(raw.maxDepth);
    if (max !== null && max >= 0 && ctx.depth > max) return false;
  }
  return script.placement.includes(ctx.placement) && !script.disabled && script.findRegex !== '';
}

/**
 * Applies `scripts` to `text` for one placement and mode. Scripts run in ST's order, each on the previous
 * one's output; an empty string is never matched (ST returns it untouched, and later scripts skip it too).
 */
export function applyRegexScripts(
  scripts: readonly (ScopedRegexScript | JsonObject | RegexScript)[],
  text: string,
  ctx: RegexRunContext,
): RegexRunResult {
  const result: RegexRunResult = {
    text: typeof text === 'string' ? text : '',
    applied: [],
    appliedNames: [],
    warnings: [],
  };
  if (!result.text) return result;
  const substitute = ctx.substitute ?? identity;
  const items = orderRegexScripts((Array.isArray(scripts) ? scripts : []).map((s, i) => normalise(s, i)));
  for (const { raw, script, scope } of items) {
    if (!result.text) break;
    try {
      if (!gateOpen(script, raw, ctx)) continue;
      runScript(script, raw, scope, result, substitute);
    } catch (error) {
      // A throwing macro hook or other surprise: the script is skipped, the turn goes on.
      result.warnings.push(warning('regex_unsupported', script, `script failed: ${String(error)}`));
    }
  }
  return result;
}

function warning(code: RegexWarningCode, script: RegexScript, message: string): RegexRunWarning {
  return { code, script_id: script.id, script_name: script.scriptName, message };
}

/** ST `runRegexScript` on `result.text`. */
function runScript(
  script: RegexScript,
  raw: JsonObject,
  scope: RegexScriptScope | null,
  result: RegexRunResult,
  substitute: RegexMacroSubstitute,
): void {
  // ST: Number(substituteRegex); 1 raw, 2 escaped, anything else as written.
  const mode = Number(raw.substituteRegex);
  const pattern =
    mode === 1
      ? substitute(script.findRegex)
      : mode === 2
        ? substitute(script.findRegex, sanitizeRegexMacro)
        : script.findRegex;
  const parsed = parseScriptRegex(String(pattern));
  if (parsed === null) {
    result.warnings.push(warning('regex_invalid', script, 'findRegex has no pattern'));
    return;
  }
  const compiled = compileUserRegex(parsed.source, parsed.flags);
  if (!compiled.ok) {
    const code = compiled.reason === 'invalid' ? 'regex_invalid' : 'regex_unsupported';
    result.warnings.push(warning(code, script, compiled.message));
    return;
  }
  const regex = compiled.regex;
  const input = result.text;
  const trimStrings = script.trimStrings.map((t) => substitute(String(t)));
  let matches = 0;
  const output = regex.replace(input, (match) => {
    matches++;
    return substitute(buildReplacement(script.replaceString, match, regex.groupCount, input, trimStrings));
  });
  if (regex.lastAborted) {
    result.warnings.push(
      warning(
        'regex_guard_exceeded',
        script,
        'the pattern needs the guarded engine and ran out of its step budget',
      ),
    );
    return;
  }
  if (matches === 0) return;
  result.text = output;
  result.applied.push({ id: script.id, name: script.scriptName, scope, engine: regex.engine, matches });
  result.appliedNames.push(script.scriptName);
}

/**
 * ST's replacement: `{{match}}` → `$0`; then `$N` → the N-th replace-callback argument and `$<name>` → the
 * named group, each with every trim string removed; a missing or empty value → "". Like ST, `$N` past the
 * last group reads the callback's next arguments: the match offset, then the whole input (an offset of 0
 * is ""). `$$`, `$&` and the like stay literal (ST builds the text itself).
 */
function buildReplacement(
  replaceString: string,
  match: UserRegexMatch,
  groupCount: number,
  input: string,
  trimStrings: string[],
): string {
  const template = replaceString.replace(/{{match}}/gi, '$0');
  return template.replace(/\$(\d+)|\$<([^>]+)>/g, (_, num: string | undefined, name: string | undefined) => {
    let value: string | undefined;
    let trim = true;
    if (num) {
      const n = Number(num);
      if (n <= groupCount) value = match.groups[n];
      else if (n === groupCount + 1) {
        value = match.index === 0 ? undefined : String(match.index);
        trim = false;
      } else if (n === groupCount + 2) value = input;
    } else if (name) {
      value = Object.prototype.hasOwnProperty.call(match.named, name) ? match.named[name] : undefined;
    }
    if (!value) return '';
    if (!trim) return value;
    let filtered = value;
    for (const t of trimStrings) filtered = filtered.split(t).join('');
    return filtered;
  });
}

export interface RegexScriptClassification {
  id: string;
  name: string;
  disabled: boolean;
  unsupported: boolean;
  /** Why it cannot run (`unsupported`): the engine's message or "no runtime placement". */
  unsupported_reason: string | null;
  /** When it runs (enabled and supported only): prompt = `promptOnly`, persist = neither flag, display = `markdownOnly` only. */
  executes: 'prompt' | 'persist' | 'display' | null;
  /** Engine the pattern runs on; null when macros are substituted into it first or it cannot run. */
  engine: UserRegexEngine | null;
}

/**
 * Per-script view of the codec's `compatReport` (formats/regex-scripts.ts): same defaults, same
 * unsupported rule (`isUnsupportedRegexScript`), same execution classes, so counting these gives the
 * report's numbers.
 */
export function classifyRegexScripts(scripts: readonly JsonObject[]): RegexScriptClassification[] {
  return scripts.map((raw, index) => {
    const script = withRegexDefaults(raw, index);
    const unsupported = isUnsupportedRegexScript(script);
    const support = findRegexSupport(script.findRegex, script.substituteRegex);
    const runnable = !script.disabled && !unsupported;
    return {
      id: script.id,
      name: script.scriptName,
      disabled: script.disabled,
      unsupported,
      unsupported_reason: !unsupported ? null : support.supported ? 'no runtime placement' : support.message,
      executes: !runnable ? null : script.promptOnly ? 'prompt' : script.markdownOnly ? 'display' : 'persist',
      engine: support.supported ? support.engine : null,
    };
  });
}
