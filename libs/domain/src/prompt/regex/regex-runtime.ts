import type { JsonObject } from '../../formats/format.rules';
import { isUnsupportedRegexScript, RegexScript, withRegexDefaults } from '../../formats/regex-scripts';
import { findRegexSupport } from './script-support';
import {
  cachedUserRegex,
  CompileUserRegexResult,
  compileUserRegex,
  parseScriptRegex,
  userRegexCompileCost,
  UserRegexEngine,
  UserRegexMatch,
} from './user-regex';

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
  /**
   * Compile work left for patterns not compiled yet (`REGEX_LIMITS.maxCompileWork`), shared by every call
   * given the same object. Default: one budget per `scripts` array, so a caller that passes one array for
   * all the strings of a turn (build-prompt does) gets one budget per turn.
   */
  compileBudget?: RegexCompileBudget;
}

/** See `RegexRunContext.compileBudget`. */
export interface RegexCompileBudget {
  /** Units left (USER_REGEX_LIMITS units: pattern characters or program instructions). */
  remaining: number;
  /** Scripts this budget refused: skipped without a second warning for as long as the budget lives. */
  readonly refused: WeakSet<object>;
  /**
   * Pattern warnings already given in this run (`regex_invalid`/`regex_unsupported` + message, per script):
   * given once, not once per string (2,000 unsupported scripts x 100 messages made 200,000 warnings).
   */
  readonly warned: WeakMap<object, Set<string>>;
}

export function newRegexCompileBudget(units: number = REGEX_LIMITS.maxCompileWork): RegexCompileBudget {
  return { remaining: units, refused: new WeakSet(), warned: new WeakMap() };
}

/** False when this run already gave this pattern warning for this script. */
function firstPatternWarning(
  budget: RegexCompileBudget,
  raw: JsonObject,
  code: string,
  message: string,
): boolean {
  if (typeof raw !== 'object' || raw === null) return true;
  let given = budget.warned.get(raw);
  if (!given) {
    given = new Set();
    budget.warned.set(raw, given);
  }
  const key = `${code}\u0000${message}`;
  if (given.has(key)) return false;
  given.add(key);
  return true;
}

const budgetByScripts = new WeakMap<object, RegexCompileBudget>();

function budgetFor(scripts: unknown): RegexCompileBudget {
  if (typeof scripts !== 'object' || scripts === null) return newRegexCompileBudget();
  let budget = budgetByScripts.get(scripts);
  if (!budget) {
    budget = newRegexCompileBudget();
    budgetByScripts.set(scripts, budget);
  }
  return budget;
}

export interface RegexRuleApplied {
  id: string;
  name: string;
  scope: RegexScriptScope | null;
  engine: UserRegexEngine;
  /** Replacements made (≥ 1: a script that matched nothing is not listed). */
  matches: number;
}

export type RegexWarningCode = 'regex_invalid' | 'regex_unsupported' | 'regex_guard_exceeded' | 'regex_limit';

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
  return { raw, script: runtimeView(raw, index), scope: scoped.scope ?? null, index };
}

/** The fields of `withRegexDefaults` the runtime reads. */
type RuntimeScript = Pick<
  RegexScript,
  | 'id'
  | 'scriptName'
  | 'findRegex'
  | 'replaceString'
  | 'trimStrings'
  | 'placement'
  | 'disabled'
  | 'markdownOnly'
  | 'promptOnly'
  | 'runOnEdit'
>;

/**
 * `withRegexDefaults(raw, index)` restricted to what the runtime reads, by the same rules (tested equal).
 * The full one deep-clones the script and, for a script without an id, hashes all of it: that was 70 % of
 * the cost per script and message (900 scripts x 20 messages: 0.5-0.95 s → 0.3 s). The id is only made
 * when a result or warning names the script.
 */
function runtimeView(raw: JsonObject, index: number): RuntimeScript {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const placement =
    raw.placement === undefined || raw.placement === null
      ? []
      : Array.isArray(raw.placement)
        ? raw.placement
        : [raw.placement];
  let id: string | undefined = typeof raw.id === 'string' && raw.id !== '' ? raw.id : undefined;
  return {
    get id() {
      return (id ??= madeId(raw, index));
    },
    scriptName: str(raw.scriptName),
    findRegex: str(raw.findRegex),
    replaceString: str(raw.replaceString),
    trimStrings: Array.isArray(raw.trimStrings) ? (raw.trimStrings as string[]) : [],
    placement: placement as number[],
    disabled: raw.disabled === true,
    markdownOnly: raw.markdownOnly === true,
    promptOnly: raw.promptOnly === true,
    runOnEdit: raw.runOnEdit === true,
  };
}

/**
 * The id `withRegexDefaults` makes for a script without one (a hash of the whole script), kept per script
 * object: an unsupported script is named by a warning on every string of a turn (2,000 scripts of 5,000
 * characters x 100 messages hashed 1 GB).
 */
const madeIds = new WeakMap<object, { index: number; id: string }>();

function madeId(raw: JsonObject, index: number): string {
  if (typeof raw !== 'object' || raw === null) return withRegexDefaults(raw, index).id;
  const hit = madeIds.get(raw);
  if (hit && hit.index === index) return hit.id;
  const id = withRegexDefaults(raw, index).id;
  madeIds.set(raw, { index, id });
  return id;
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
function gateOpen(script: RuntimeScript, raw: JsonObject, ctx: RegexRunContext): boolean {
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
  const budget = ctx.compileBudget ?? budgetFor(scripts);
  const items = orderRegexScripts((Array.isArray(scripts) ? scripts : []).map((s, i) => normalise(s, i)));
  for (const { raw, script, scope } of items) {
    if (!result.text) break;
    try {
      if (!gateOpen(script, raw, ctx)) continue;
      runScript(script, raw, scope, result, substitute, budget);
    } catch (error) {
      // A throwing macro hook or other surprise: the script is skipped, the turn goes on.
      result.warnings.push(warning('regex_unsupported', script, `script failed: ${String(error)}`));
    }
  }
  return result;
}

function warning(code: RegexWarningCode, script: RuntimeScript, message: string): RegexRunWarning {
  return { code, script_id: script.id, script_name: script.scriptName, message };
}

/**
 * Each script object keeps its own compilation (checked against the pattern it was made from): with more
 * than the shared LRU's 1,000 distinct patterns every message recompiled every script (1,500 scripts x 20
 * messages: 1.6 s → 0.4 s).
 */
const compiledByScript = new WeakMap<
  object,
  { pattern: string; result: CompileUserRegexResult | 'no_pattern' }
>();

function compileForScript(
  raw: JsonObject,
  pattern: string,
  budget: RegexCompileBudget,
): CompileUserRegexResult | 'no_pattern' | 'over_budget' {
  const isObject = typeof raw === 'object' && raw !== null;
  // Keyed by the findRegex as run (after macros): no parse and no key string per call (a `flags + source`
  // key was flattened, i.e. copied, on every call: 10,000 scripts x 100 messages made 1 GB of garbage).
  const hit = isObject ? compiledByScript.get(raw) : undefined;
  if (hit && hit.pattern === pattern) return hit.result;
  const parsed = parseScriptRegex(pattern);
  let result: CompileUserRegexResult | 'no_pattern';
  if (parsed === null) result = 'no_pattern';
  else {
    if (!cachedUserRegex(parsed.source, parsed.flags)) {
      const cost = userRegexCompileCost(parsed.source);
      if (cost > budget.remaining) {
        if (isObject) budget.refused.add(raw);
        return 'over_budget';
      }
      budget.remaining -= cost;
    }
    result = compileUserRegex(parsed.source, parsed.flags);
  }
  if (isObject) compiledByScript.set(raw, { pattern, result });
  return result;
}

/** ST `runRegexScript` on `result.text`. */
function runScript(
  script: RuntimeScript,
  raw: JsonObject,
  scope: RegexScriptScope | null,
  result: RegexRunResult,
  substitute: RegexMacroSubstitute,
  budget: RegexCompileBudget,
): void {
  // Refused by this run's compile budget: already warned once; skipped before any work.
  if (typeof raw === 'object' && raw !== null && budget.refused.has(raw)) return;
  // ST: Number(substituteRegex); 1 raw, 2 escaped, anything else as written.
  const mode = Number(raw.substituteRegex);
  const pattern =
    mode === 1
      ? substitute(script.findRegex)
      : mode === 2
        ? substitute(script.findRegex, sanitizeRegexMacro)
        : script.findRegex;
  const compiled = compileForScript(raw, String(pattern), budget);
  if (compiled === 'no_pattern') {
    if (firstPatternWarning(budget, raw, 'regex_invalid', ''))
      result.warnings.push(warning('regex_invalid', script, 'findRegex has no pattern'));
    return;
  }
  if (compiled === 'over_budget') {
    result.warnings.push(
      warning(
        'regex_limit',
        script,
        `script skipped: compiling it would pass the ${REGEX_LIMITS.maxCompileWork}-unit compile budget of this run`,
      ),
    );
    return;
  }
  if (!compiled.ok) {
    const code = compiled.reason === 'invalid' ? 'regex_invalid' : 'regex_unsupported';
    if (firstPatternWarning(budget, raw, code, compiled.message))
      result.warnings.push(warning(code, script, compiled.message));
    return;
  }
  const regex = compiled.regex;
  const input = result.text;
  const builder = new ReplacementBuilder(script.replaceString, regex.groupCount, input, () =>
    script.trimStrings.map((t) => {
      const text = String(t);
      if (!mayHoldMacros(text)) return text;
      builder.work += REGEX_LIMITS.macroPassCost;
      return substitute(text);
    }),
  );
  // A script may lengthen the text to at most this (never below the length it was given).
  const maxOutput = Math.max(REGEX_LIMITS.maxOutputChars, input.length);
  let matches = 0;
  let produced = 0;
  let output: string;
  try {
    output = regex.replace(input, (match) => {
      matches++;
      const built = builder.build(match);
      let replacement = built;
      if (mayHoldMacros(built)) {
        builder.work += REGEX_LIMITS.macroPassCost;
        replacement = substitute(built);
      }
      // The output is at least every replacement made so far, so past the limit it cannot end below it.
      produced += replacement.length;
      if (produced > maxOutput)
        throw new RegexLimitExceeded(`its output would exceed ${maxOutput} characters`);
      if (builder.work > REGEX_LIMITS.maxReplacementWork) {
        throw new RegexLimitExceeded(
          `building its replacements would take more than ${REGEX_LIMITS.maxReplacementWork} steps`,
        );
      }
      return replacement;
    });
  } catch (error) {
    if (!(error instanceof RegexLimitExceeded)) throw error;
    result.warnings.push(warning('regex_limit', script, `script skipped: ${error.message}`));
    return;
  }
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
 * Bounds of one script run (not in ST; hostile scripts must not stall the event loop that serves every
 * account's streams, nor exhaust memory). Past either the script is skipped (text unchanged) with a
 * `regex_limit` warning; the other scripts still run.
 */
export const REGEX_LIMITS = {
  /**
   * Compile work of one run (see `RegexRunContext.compileBudget`: a turn's prompt build) on patterns not
   * compiled yet, in USER_REGEX_LIMITS units (a pattern's length or program estimate). A pattern already
   * compiled (the shared LRU of 1,000, or the script object's own) costs nothing. Past it, each further
   * script to compile is skipped with one `regex_limit` warning per run. re2js compiles at ~1-6 µs a unit:
   * a 10 MiB set of 2,000 patterns of 5,000 characters took 20 s on every turn (10,000 of 1,000: 16.5 s);
   * with this budget the first string of a turn takes 0.3-0.5 s (0.7 s for 10,000 scripts, most of it the
   * per-script cost). Tens of scripts of 2,000 characters fit (real profiles are far below), and an imported
   * regex profile always does (`REGEX_IMPORT_MAX_PATTERN_UNITS` is this figure).
   */
  maxCompileWork: 100_000,
  /**
   * Longest text one script may produce (or the text it was given, if longer): 5x the message limit.
   * `{{match}}` 1,000 times on `/./g` over 200,000 characters built 200,000,000 characters in 55 s, and
   * `$3` (ST: the whole input, past the match offset `$2`) on `/(.)/g` is quadratic.
   */
  maxOutputChars: 1_000_000,
  /**
   * Replacement-building steps of one script: each literal character and each character of a group
   * value read (times 1 + the number of trim strings: each trim string scans the value), plus
   * `macroPassCost` per macro pass. 1,000 trim strings on a group value of every character of a
   * 200,000-character text would otherwise scan 200,000,000 characters.
   */
  maxReplacementWork: 20_000_000,
  /** One macro pass over a replacement (~8 µs of fixed cost in the macro engine, plus its trace). */
  macroPassCost: 1_000,
} as const;

class RegexLimitExceeded extends Error {}

/**
 * A text with none of these is unchanged by the macro engines (every macro, classic or v2, opens with
 * `{{`; ST's legacy `<USER>`-style tags; v2 unescapes `\{`/`\}` and drops its internal else marker, which
 * holds a NUL), so it skips the macro pass: 200,000 passes over one-character replacements took 1.7 s.
 */
const MACRO_HINT = /{{|\\[{}]|<(?:USER|BOT|CHAR|GROUP|CHARIFNOTGROUP)>/i;

function mayHoldMacros(text: string): boolean {
  return text.includes('\u0000') || MACRO_HINT.test(text);
}

type TemplatePart = { literal: string } | { num: number } | { name: string };

/**
 * The matches of ST's `/\$(\d+)|\$<([^>]+)>/g` over a template, in one pass. V8 runs that pattern in
 * quadratic time when many `$<` have no `>` after them (each scans to the end: 40,000 `$<a` took 2.3 s).
 */
function* templateRefs(
  template: string,
): Generator<{ start: number; end: number; part: { num: number } | { name: string } }> {
  let nextClose = -2; // the first `>` at or after the last search start; -1 when there is none
  for (let i = template.indexOf('$'); i >= 0 && i < template.length; i = template.indexOf('$', i)) {
    const next = template.charCodeAt(i + 1);
    if (next >= 0x30 && next <= 0x39) {
      let end = i + 2;
      while (end < template.length && template.charCodeAt(end) >= 0x30 && template.charCodeAt(end) <= 0x39)
        end++;
      yield { start: i, end, part: { num: Number(template.slice(i + 1, end)) } };
      i = end;
      continue;
    }
    if (next === 0x3c /* < */ && nextClose !== -1) {
      if (nextClose < i + 2) nextClose = template.indexOf('>', i + 2);
      if (nextClose > i + 2) {
        yield { start: i, end: nextClose + 1, part: { name: template.slice(i + 2, nextClose) } };
        i = nextClose + 1;
        continue;
      }
    }
    i++;
  }
}

/** Trimmed group values remembered per script run (values up to this length, at most this many). */
const TRIM_MEMO_VALUE_MAX = 1_000;
const TRIM_MEMO_ENTRIES = 10_000;

/**
 * ST's replacement: `{{match}}` → `$0`; then `$N` → the N-th replace-callback argument and `$<name>` → the
 * named group, each with every trim string removed; a missing or empty value → "". Like ST, `$N` past the
 * last group reads the callback's next arguments: the match offset, then the whole input (an offset of 0
 * is ""). `$$`, `$&` and the like stay literal (ST builds the text itself). The template is the same for
 * every match, so it is cut into parts once per script run (ST re-parses it per match: with 1,000
 * references that was 1,000 callbacks per match); `work` counts the building steps.
 */
class ReplacementBuilder {
  private readonly parts: TemplatePart[] = [];
  private readonly literalLength: number;
  private readonly trimMemo = new Map<string, string>();
  private trimStrings: string[] | undefined;
  work = 0;

  constructor(
    replaceString: string,
    private readonly groupCount: number,
    private readonly input: string,
    /** The trim strings after their macro pass: made on the first value that needs trimming. */
    private readonly trims: () => string[],
  ) {
    const template = replaceString.replace(/{{match}}/gi, '$0');
    let last = 0;
    let literalLength = 0;
    for (const ref of templateRefs(template)) {
      const literal = template.slice(last, ref.start);
      if (literal) this.parts.push({ literal });
      literalLength += literal.length;
      this.parts.push(ref.part);
      last = ref.end;
    }
    const tail = template.slice(last);
    if (tail) this.parts.push({ literal: tail });
    this.literalLength = literalLength + tail.length;
  }

  build(match: UserRegexMatch): string {
    this.work += this.literalLength + this.parts.length;
    let out = '';
    for (const part of this.parts) {
      if ('literal' in part) out += part.literal;
      else out += this.value(part, match);
    }
    return out;
  }

  private value(part: { num: number } | { name: string }, match: UserRegexMatch): string {
    let value: string | undefined;
    if ('num' in part) {
      const n = part.num;
      if (n <= this.groupCount) value = match.groups[n];
      else if (n === this.groupCount + 1) return match.index === 0 ? '' : String(match.index);
      else if (n === this.groupCount + 2) value = this.input;
    } else {
      value = Object.prototype.hasOwnProperty.call(match.named, part.name)
        ? match.named[part.name]
        : undefined;
    }
    if (!value) return '';
    this.trimStrings ??= this.trims();
    if (this.trimStrings.length === 0) {
      this.work += value.length;
      return value;
    }
    const memo = value.length <= TRIM_MEMO_VALUE_MAX;
    const known = memo ? this.trimMemo.get(value) : undefined;
    if (known !== undefined) {
      this.work += value.length;
      return known;
    }
    this.work += value.length * (1 + this.trimStrings.length);
    // Checked before trimming, so one hostile value cannot run far past the budget.
    if (this.work > REGEX_LIMITS.maxReplacementWork) {
      throw new RegexLimitExceeded(
        `building its replacements would take more than ${REGEX_LIMITS.maxReplacementWork} steps`,
      );
    }
    let filtered = value;
    for (const t of this.trimStrings) filtered = filtered.split(t).join('');
    if (memo) {
      if (this.trimMemo.size >= TRIM_MEMO_ENTRIES) this.trimMemo.clear();
      this.trimMemo.set(value, filtered);
    }
    return filtered;
  }
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
