import { Matcher, RE2JS } from 're2js';
import { compileGuarded, GuardBudget, guardBudgetFor, GuardedProgram } from './guarded-matcher';

/**
 * User regexes (lorebook `/regex/` keys and regex scripts) without ever running V8 `RegExp` on user input
 * (performance-and-reliability.md "Linear-time engines": never fall back to V8 RegExp on user patterns in
 * the request thread).
 *
 * - The pattern is first checked for JavaScript validity (`new RegExp(source, flags)` compiles only, it never
 *   matches): what SillyTavern could not compile is `invalid`, as ST treats it (§d.3, §f).
 * - It is then translated to RE2 syntax and run by re2js (linear time): `engine: 'linear'`. Captureless
 *   lookbehinds run linearly too (re2js LOOKBEHINDS).
 * - Lookahead, backreferences, and lookbehinds with captures cannot run on RE2. They run on the
 *   step-bounded backtracking matcher (`guarded-matcher.ts`): `engine: 'guarded'`. Each call gets a step
 *   budget; a call that exceeds it is abandoned (no match, text unchanged) and `lastAborted` is set, so the
 *   caller reports a warning. A catastrophic pattern therefore costs at most the budget, never a stall.
 * - Anything else RE2 refuses (e.g. a repeat count over 1000) is `unsupported`.
 */

export type UserRegexEngine = 'linear' | 'guarded';

export interface UserRegexMatch {
  /** UTF-16 offset of the match start. */
  index: number;
  /** UTF-16 offset just past the match. */
  end: number;
  text: string;
  /** Like a JS exec array: `groups[0]` is the whole match, `groups[n]` capture group n (undefined if it did not take part). */
  groups: (string | undefined)[];
  /** Named groups (`(?<name>…)`), undefined if it did not take part. */
  named: Record<string, string | undefined>;
}

export interface UserRegex {
  readonly source: string;
  readonly flags: string;
  readonly engine: UserRegexEngine;
  /** `g` flag: `replace` replaces every match, otherwise only the first. */
  readonly global: boolean;
  /** Number of capture groups (not counting the whole match). */
  readonly groupCount: number;
  readonly groupNames: readonly string[];
  /** Set by every call: true when a guarded pattern ran out of its step budget (the call then reports no match). */
  readonly lastAborted: boolean;
  /** Does the pattern match anywhere in `text` (from 0, like a fresh `RegExp#test`; `y` = only at 0). */
  test(text: string): boolean;
  /** The first match at or after `from` (default 0); with `y`, only a match starting exactly at `from`. */
  firstMatch(text: string, from?: number): UserRegexMatch | null;
  /** Every match JS `String#replace` with a `g` regex would visit (empty matches advance by one unit/code point). */
  matchAll(text: string): UserRegexMatch[];
  /** JS `String#replace(regex, fn)` semantics: all matches with `g`, else the first; `replacer` returns literal text. */
  replace(text: string, replacer: (match: UserRegexMatch) => string): string;
}

export type CompileUserRegexResult =
  { ok: true; regex: UserRegex } | { ok: false; reason: 'invalid' | 'unsupported'; message: string };

/**
 * ST 1.18 `parseRegexFromString` (world-info.js, used for lorebook keys, §d.3): `/pattern/flags` with flags
 * from `gimsuy`, any unescaped `/` inside the body → not a regex key (null). Only the FIRST `\/` is
 * unescaped (ST's string `replace`; the others stay `\/`, which means `/` in a JS regex anyway). Whether the
 * pattern compiles is `compileUserRegex`'s job (ST: an invalid pattern makes the key a plain string).
 */
export function parseRegexLiteral(text: string): { source: string; flags: string } | null {
  if (typeof text !== 'string') return null;
  const match = /^\/([\w\W]+?)\/([gimsuy]*)$/.exec(text);
  if (!match) return null;
  let source = match[1];
  const flags = match[2];
  if (/(^|[^\\])\//.test(source)) return null;
  source = source.replace('\\/', '/');
  return { source, flags };
}

/**
 * ST 1.18 `regexFromString` (utils.js, used for regex scripts' `findRegex`, §f): `(\/?)(.+)\1([a-z]*)`
 * (unanchored, `.` stops at a newline), so `/p/gi` → `p` + `gi` and a bare pattern is itself with no flags.
 * Flags outside `gmixXsuUAJ` or repeated → the WHOLE input becomes the pattern, without flags. Returns null
 * where ST's would throw (no match at all); flags JS rejects (x, X, U, A, J) make `compileUserRegex` answer
 * `invalid`, as ST's `new RegExp` throws and the script is skipped.
 */
export function parseScriptRegex(findRegex: string): { source: string; flags: string } | null {
  if (typeof findRegex !== 'string') return null;
  const match = /(\/?)(.+)\1([a-z]*)/i.exec(findRegex);
  if (!match) return null;
  if (match[3] && !/^(?!.*?(.).*?\1)[gmixXsuUAJ]+$/.test(match[3])) return { source: findRegex, flags: '' };
  return { source: match[2], flags: match[3] };
}

/**
 * Bounds of one compilation (not in ST, whose V8 compiles in microseconds; not in re2js either, which allows
 * programs of 1,398,101 instructions). re2js compiles at ~1-6 µs per pattern character or program
 * instruction (GC-bound) and superlinearly past ~100,000: a 1 MB `findRegex` took 2.2 s, 8 MB 70 s, and a
 * 100-character `a{1000}a{1000}…` (14,000 instructions) 0.27 s. A longer or larger pattern is `unsupported`
 * (a regex script is then skipped with `regex_unsupported` and counted unsupported at import; a lorebook
 * key never matches), checked before anything is compiled. The limits leave room for the long word-list
 * alternations some shared scripts use (tens of thousands of characters of `phrase|phrase|…`); one
 * compilation at them is ~0.1-0.5 s, once per process (compilations are cached), and a turn compiles at most
 * `REGEX_LIMITS.maxCompileWork` units anew.
 */
export const USER_REGEX_LIMITS = {
  /** UTF-16 units of the pattern source. */
  maxSourceLength: 50_000,
  /** Upper estimate of the compiled program (`estimateProgramSize`): counted repeats multiply. */
  maxProgramSize: 100_000,
};

const QUANTIFIER_AT = /\{(\d+)(,(\d*))?\}/y;

/**
 * Upper estimate of the program size re2js would build for a JavaScript pattern (re2js `calcSize` rules:
 * an atom 1, a group its content + 2, `*` `+` `?` + 2, `|` + 1, `{n,m}` its atom x m + (m − n); a class is
 * one atom however long). Works on the source as written, so it can run before any compilation; it may
 * overestimate (an escape's trailing hex digits count as atoms), never underestimate by more than a constant.
 * Stops counting past `cap` (returns a value above it).
 */
export function estimateProgramSize(source: string, cap = Number.MAX_SAFE_INTEGER): number {
  const outer: number[] = [];
  let size = 0;
  let last = 0;
  for (let i = 0; i < source.length; i++) {
    if (size > cap) return size;
    const c = source[i];
    if (c === '\\') {
      const kind = source[i + 1];
      // `\u{…}`, `\p{…}`, `\P{…}`: one atom; the braces are no quantifier (`\u{10000}` is not `u` x 10,000).
      const braced = (kind === 'u' || kind === 'p' || kind === 'P') && source[i + 2] === '{';
      const close = braced ? source.indexOf('}', i + 3) : -1;
      i = close >= 0 ? close : i + 1;
      size += 1;
      last = 1;
      continue;
    }
    if (c === '[') {
      // JS: the class ends at the first unescaped `]` (`[]` is an empty class).
      let j = i + 1;
      if (source[j] === '^') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      i = j;
      size += 1;
      last = 1;
      continue;
    }
    if (c === '(') {
      outer.push(size);
      size = 0;
      last = 0;
      continue;
    }
    if (c === ')') {
      const group = size + 2;
      size = (outer.pop() ?? 0) + group;
      last = group;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      size += 2;
      last = 0;
      continue;
    }
    if (c === '{') {
      QUANTIFIER_AT.lastIndex = i;
      const q = QUANTIFIER_AT.exec(source);
      if (q) {
        const min = Number(q[1]);
        const max = q[2] === undefined ? min : q[3] === '' ? min + 1 : Number(q[3]);
        const times = Math.max(1, max);
        size += last * (times - 1) + Math.max(0, max - min);
        last = 0;
        i += q[0].length - 1;
        continue;
      }
    }
    size += 1;
    last = c === '|' ? 0 : 1;
  }
  while (outer.length > 0) size += (outer.pop() as number) + 2;
  return size;
}

/**
 * The compile work a pattern not yet compiled would cost (for a caller's budget, in the units of
 * USER_REGEX_LIMITS): its length or its program estimate, whichever is larger. A pattern over the length
 * limit costs 0 (refused at once), one over the program limit its length (refused after the syntax check).
 */
export function userRegexCompileCost(source: string): number {
  if (source.length > USER_REGEX_LIMITS.maxSourceLength) return 0;
  const program = estimateProgramSize(source, USER_REGEX_LIMITS.maxProgramSize);
  if (program > USER_REGEX_LIMITS.maxProgramSize) return source.length;
  return Math.max(source.length, program);
}

const CACHE_LIMIT = 1000;
const cache = new Map<string, CompileUserRegexResult>();

/** The cached compilation of a pattern, if any (does not compile, does not refresh the LRU). */
export function cachedUserRegex(source: string, flags: string): CompileUserRegexResult | undefined {
  return cache.get(`${flags}\u0000${source}`);
}

/** Compiles (or returns the cached compilation of) a user pattern. Never throws. */
export function compileUserRegex(source: string, flags: string): CompileUserRegexResult {
  if (typeof source === 'string' && source.length > USER_REGEX_LIMITS.maxSourceLength) {
    // Not cached: refusing costs nothing, and a huge key would hold memory.
    return {
      ok: false,
      reason: 'unsupported',
      message: `pattern is ${source.length} characters long; at most ${USER_REGEX_LIMITS.maxSourceLength}`,
    };
  }
  const key = `${flags}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let result: CompileUserRegexResult;
  try {
    result = compileUncached(String(source), String(flags));
  } catch (error) {
    result = {
      ok: false,
      reason: 'unsupported',
      message: `pattern could not be prepared: ${errorText(error)}`,
    };
  }
  cache.set(key, result);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return result;
}

/** For tests: the number of cached compilations. */
export function userRegexCacheSize(): number {
  return cache.size;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function compileUncached(source: string, flags: string): CompileUserRegexResult {
  try {
    // Compile only (V8 parses lazily and never matches here): tells what SillyTavern would reject.
    new RegExp(source, flags);
  } catch (error) {
    return { ok: false, reason: 'invalid', message: errorText(error) };
  }
  if (flags.includes('v')) {
    return { ok: false, reason: 'unsupported', message: 'the v (unicodeSets) flag is not supported' };
  }
  const programSize = estimateProgramSize(source, USER_REGEX_LIMITS.maxProgramSize);
  if (programSize > USER_REGEX_LIMITS.maxProgramSize) {
    return {
      ok: false,
      reason: 'unsupported',
      message: `pattern would compile to over ${USER_REGEX_LIMITS.maxProgramSize} instructions (counted repeats multiply)`,
    };
  }
  const info = scanGroups(source);
  const translated = translateToRe2(source, flags, info);
  if (translated.ok) {
    let re2Flags = 0;
    if (flags.includes('i')) re2Flags |= RE2JS.CASE_INSENSITIVE;
    if (flags.includes('m')) re2Flags |= RE2JS.MULTILINE;
    if (flags.includes('s')) re2Flags |= RE2JS.DOTALL;
    if (translated.lookbehind) re2Flags |= RE2JS.LOOKBEHINDS;
    try {
      const re2 = RE2JS.compile(translated.pattern, re2Flags);
      return { ok: true, regex: new LinearUserRegex(source, flags, re2, info) };
    } catch (error) {
      if (!translated.lookbehind) {
        return {
          ok: false,
          reason: 'unsupported',
          message: `linear engine refused the pattern: ${errorText(error)}`,
        };
      }
      // A lookbehind with captures: re2js refuses it; try the guarded engine.
    }
  }
  const program = compileGuarded(source, flags);
  if (!program.ok) return { ok: false, reason: 'unsupported', message: program.message };
  return { ok: true, regex: new GuardedUserRegex(source, flags, program.program, info) };
}

interface GroupInfo {
  count: number;
  names: string[];
  /** name per group number (1-based index). */
  nameOf: (string | undefined)[];
}

/** Counts capture groups the way JS numbers them (left parenthesis order). */
function scanGroups(source: string): GroupInfo {
  const names: string[] = [];
  const nameOf: (string | undefined)[] = [undefined];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    if (c !== '(') continue;
    if (source[i + 1] !== '?') {
      nameOf.push(undefined);
      continue;
    }
    if (source[i + 2] === '<' && source[i + 3] !== '=' && source[i + 3] !== '!') {
      const close = source.indexOf('>', i + 3);
      const name = source.slice(i + 3, close);
      names.push(name);
      nameOf.push(name);
    }
  }
  return { count: nameOf.length - 1, names, nameOf };
}

/** JS `\s`: WhiteSpace + LineTerminator (ECMA-262), as an RE2 class body. */
const JS_SPACE_BODY =
  '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
const QUANTIFIER = /^\{(\d+)(,(\d*))?\}/;
const RE2_META = /[\\.+*?()|[\]{}^$\-#&~]/;

type Translation = { ok: true; pattern: string; lookbehind: boolean } | { ok: false; why: string };

const hex = (code: number) => `\\x{${code.toString(16).toUpperCase()}}`;
const isHex = (s: string) => /^[0-9a-fA-F]+$/.test(s);

/**
 * Rewrites a (valid) JavaScript pattern in RE2 syntax with JavaScript's meaning: `.` stops at every JS
 * line terminator, `\s` is JS's whitespace set, `(?<n>` → `(?P<n>`, `\uXXXX`/`\xHH`/`\cX`/legacy octal →
 * `\x{…}`, a `{` or `}` that is not a quantifier is literal, `[` inside a class is literal (RE2 would read
 * `[:alpha:]`), `[]` never matches and `[^]` matches anything. Lookahead and backreferences → not linear.
 */
function translateToRe2(source: string, flags: string, info: GroupInfo): Translation {
  const unicode = flags.includes('u');
  const dotAll = flags.includes('s');
  let out = '';
  let lookbehind = false;
  let inClass = false;
  let classStart = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const escaped = translateEscape(source, i, inClass, unicode, info);
      if (!escaped.ok) return escaped;
      out += escaped.text;
      i = escaped.next - 1;
      classStart = false;
      continue;
    }
    if (inClass) {
      if (c === ']' && !classStart) {
        inClass = false;
        out += ']';
      } else if (c === '[') out += '\\[';
      else if (c === ']') out += '\\]';
      else out += literalChar(source, i, true);
      if (c !== '^' || !classStart) classStart = false;
      if (c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdbff && i + 1 < source.length) i++;
      continue;
    }
    switch (c) {
      case '[':
        if (source[i + 1] === ']') {
          out += '[^\\x00-\\x{10FFFF}]';
          i += 1;
        } else if (source[i + 1] === '^' && source[i + 2] === ']') {
          out += '[\\x00-\\x{10FFFF}]';
          i += 2;
        } else {
          inClass = true;
          classStart = true;
          out += '[';
          if (source[i + 1] === '^') {
            out += '^';
            i++;
          }
        }
        break;
      case '(':
        if (source.startsWith('(?=', i) || source.startsWith('(?!', i))
          return { ok: false, why: 'lookahead' };
        if (source.startsWith('(?<=', i) || source.startsWith('(?<!', i)) {
          lookbehind = true;
          out += source.slice(i, i + 4);
          i += 3;
        } else if (source.startsWith('(?<', i)) {
          out += '(?P<';
          i += 2;
        } else out += '(';
        break;
      case '.':
        out += dotAll ? '.' : JS_DOT;
        break;
      case '{': {
        const q = QUANTIFIER.exec(source.slice(i));
        if (q) {
          out += q[0];
          i += q[0].length - 1;
        } else out += '\\{';
        break;
      }
      case '}':
        out += '\\}';
        break;
      case ']':
        out += '\\]';
        break;
      case '^':
      case '$':
      case '|':
      case ')':
      case '*':
      case '+':
      case '?':
        out += c;
        break;
      default:
        out += literalChar(source, i, false);
        if (c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdbff && i + 1 < source.length) i++;
    }
  }
  return { ok: true, pattern: out, lookbehind };
}

/** A literal character (or surrogate pair) at `i`, escaped for RE2 when needed. */
function literalChar(source: string, i: number, inClass: boolean): string {
  const code = source.codePointAt(i) as number;
  const c = String.fromCodePoint(code);
  if (code >= 0xd800 && code <= 0xdfff) return hex(code); // lone surrogate: RE2 has no such rune
  if (inClass) return c === '\\' ? '\\\\' : c === '&' || c === '~' ? `\\${c}` : c;
  return RE2_META.test(c) && c !== '-' ? `\\${c}` : c;
}

type EscapeResult = { ok: true; text: string; next: number } | { ok: false; why: string };

function translateEscape(
  source: string,
  i: number,
  inClass: boolean,
  unicode: boolean,
  info: GroupInfo,
): EscapeResult {
  const c = source[i + 1];
  const done = (text: string, length = 2): EscapeResult => ({ ok: true, text, next: i + length });
  if (c === undefined) return done('\\\\', 1);
  switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
      return done(`\\${c}`);
    case 'b':
      return done(inClass ? '\\x{8}' : '\\b');
    case 'B':
      return done(inClass ? 'B' : '\\B');
    case 's':
      return done(inClass ? JS_SPACE_BODY : `[${JS_SPACE_BODY}]`);
    case 'S':
      // Inside a class RE2's \S stands in (differs from JS only for non-ASCII spaces).
      return done(inClass ? '\\S' : `[^${JS_SPACE_BODY}]`);
    case 'n':
    case 'r':
    case 't':
    case 'f':
      return done(`\\${c}`);
    case 'v':
      return done('\\x{0B}');
    case 'c': {
      const letter = source[i + 2];
      if (letter !== undefined && /[A-Za-z]/.test(letter)) return done(hex(letter.charCodeAt(0) % 32), 3);
      return done('\\\\');
    }
    case 'x': {
      const h = source.slice(i + 2, i + 4);
      if (h.length === 2 && isHex(h)) return done(hex(parseInt(h, 16)), 4);
      return done('x');
    }
    case 'u':
      return unicodeEscape(source, i, unicode);
    case 'k':
      if (info.names.length > 0 || unicode) return { ok: false, why: 'backreference' };
      return done('k');
    case 'p':
    case 'P':
      if (unicode && source[i + 2] === '{') {
        const close = source.indexOf('}', i + 3);
        return done(source.slice(i, close + 1), close + 1 - i);
      }
      return done(c);
    default:
      break;
  }
  if (c >= '0' && c <= '9') {
    const digits = /^\d+/.exec(source.slice(i + 1))?.[0] ?? c;
    const number = parseInt(digits, 10);
    if (c !== '0' && !inClass && number <= info.count) return { ok: false, why: 'backreference' };
    if (c === '8' || c === '9') return done(c);
    const octal = /^[0-7]{1,3}/.exec(source.slice(i + 1))?.[0] ?? '0';
    const value = parseInt(octal, 8) > 0o377 ? octal.slice(0, 2) : octal;
    return done(hex(parseInt(value, 8)), 1 + value.length);
  }
  const code = source.codePointAt(i + 1) as number;
  const ch = String.fromCodePoint(code);
  if (/[A-Za-z]/.test(ch)) return done(ch); // identity escape of a letter (`\e` is `e` in JS)
  if (code < 0x80) return done(`\\${ch}`); // any escaped ASCII punctuation is itself in RE2 too
  return done(literalChar(source, i + 1, inClass), 1 + ch.length);
}

function unicodeEscape(source: string, i: number, unicode: boolean): EscapeResult {
  if (unicode && source[i + 2] === '{') {
    const close = source.indexOf('}', i + 3);
    const code = parseInt(source.slice(i + 3, close), 16);
    return { ok: true, text: hex(code), next: close + 1 };
  }
  const h = source.slice(i + 2, i + 6);
  if (h.length !== 4 || !isHex(h)) return { ok: true, text: 'u', next: i + 2 };
  const unit = parseInt(h, 16);
  if (unit >= 0xd800 && unit <= 0xdbff && source.startsWith('\\u', i + 6)) {
    const low = source.slice(i + 8, i + 12);
    const lowUnit = low.length === 4 && isHex(low) ? parseInt(low, 16) : 0;
    if (lowUnit >= 0xdc00 && lowUnit <= 0xdfff) {
      const code = (unit - 0xd800) * 0x400 + (lowUnit - 0xdc00) + 0x10000;
      return { ok: true, text: hex(code), next: i + 12 };
    }
  }
  if (unit >= 0xd800 && unit <= 0xdfff) return { ok: false, why: 'lone surrogate escape' };
  return { ok: true, text: hex(unit), next: i + 6 };
}

/** Shared JS `String#replace` / `matchAll` iteration over a match-at-or-after function. */
abstract class BaseUserRegex implements UserRegex {
  abstract readonly engine: UserRegexEngine;
  readonly global: boolean;
  readonly sticky: boolean;
  readonly unicode: boolean;
  readonly groupCount: number;
  readonly groupNames: readonly string[];
  protected readonly nameOf: (string | undefined)[];
  lastAborted = false;
  /** Steps left for the current public call (guarded engine only). */
  protected budget: GuardBudget = { steps: 0 };

  constructor(
    readonly source: string,
    readonly flags: string,
    info: GroupInfo,
  ) {
    this.global = flags.includes('g');
    this.sticky = flags.includes('y');
    this.unicode = flags.includes('u') || flags.includes('v');
    this.groupCount = info.count;
    this.groupNames = info.names;
    this.nameOf = info.nameOf;
  }

  /** First match starting at or after `from`, as group spans; 'aborted' when the guard tripped. */
  protected abstract search(text: string, from: number): number[] | null | 'aborted';

  protected toMatch(text: string, spans: number[]): UserRegexMatch {
    const groups: (string | undefined)[] = [];
    const named: Record<string, string | undefined> = {};
    for (let g = 0; g <= this.groupCount; g++) {
      const s = spans[2 * g];
      const value = s === undefined || s < 0 ? undefined : text.slice(s, spans[2 * g + 1]);
      groups.push(value);
      const name = this.nameOf[g];
      if (name !== undefined) named[name] = value;
    }
    return { index: spans[0], end: spans[1], text: groups[0] as string, groups, named };
  }

  private at(text: string, from: number): UserRegexMatch | null {
    const spans = this.search(text, from);
    if (spans === 'aborted') {
      this.lastAborted = true;
      return null;
    }
    if (spans === null) return null;
    if (this.sticky && spans[0] !== from) return null;
    return this.toMatch(text, spans);
  }

  /** Starts one public call: clears the abort flag and gives the call its step budget. */
  protected begin(text: string): void {
    this.lastAborted = false;
    this.budget = guardBudgetFor(text);
  }

  /** Ends one public call: drops per-text state so cached regexes keep no reference to the text. */
  protected release(): void {}

  test(text: string): boolean {
    this.begin(String(text));
    const found = this.at(String(text), 0) !== null;
    this.release();
    return found;
  }

  firstMatch(text: string, from = 0): UserRegexMatch | null {
    const input = String(text);
    this.begin(input);
    if (from < 0 || from > input.length) return null;
    const match = this.at(input, from);
    this.release();
    return match;
  }

  matchAll(text: string): UserRegexMatch[] {
    const input = String(text);
    this.begin(input);
    const matches: UserRegexMatch[] = [];
    let position = 0;
    while (position <= input.length) {
      const match = this.at(input, position);
      if (match === null) break;
      matches.push(match);
      position = match.end === match.index ? this.advance(input, match.end) : match.end;
    }
    this.release();
    if (this.lastAborted) return [];
    return matches;
  }

  /** JS AdvanceStringIndex: one code unit, or one code point with `u`. */
  protected advance(text: string, index: number): number {
    if (!this.unicode) return index + 1;
    const code = text.charCodeAt(index);
    return code >= 0xd800 && code <= 0xdbff && index + 1 < text.length ? index + 2 : index + 1;
  }

  replace(text: string, replacer: (match: UserRegexMatch) => string): string {
    const input = String(text);
    this.lastAborted = false;
    const matches = this.global ? this.matchAll(input) : [this.firstMatch(input)].filter((m) => m !== null);
    if (this.lastAborted || matches.length === 0) return input;
    let out = '';
    let last = 0;
    for (const match of matches) {
      out += input.slice(last, match.index) + String(replacer(match));
      last = match.end;
    }
    return out + input.slice(last);
  }
}

class LinearUserRegex extends BaseUserRegex {
  readonly engine = 'linear' as const;

  constructor(
    source: string,
    flags: string,
    private readonly re2: RE2JS,
    info: GroupInfo,
  ) {
    super(source, flags, info);
  }

  override test(text: string): boolean {
    this.lastAborted = false;
    if (!this.sticky) return this.re2.test(String(text));
    return super.test(text);
  }

  protected override release(): void {
    this.matcher = null;
    this.matcherText = null;
  }

  private matcherText: string | null = null;
  private matcher: Matcher | null = null;

  /**
   * Streams: each match is replaced as it is found (a linear search never aborts, so nothing is thrown
   * away). Keeping every match object until the end first made `/./g` on a 200,000-character text take
   * 1.3 s, most of it garbage collection. Its own matcher, so a replacer that uses this (cached) regex on
   * another text cannot disturb the iteration.
   */
  override replace(text: string, replacer: (match: UserRegexMatch) => string): string {
    const input = String(text);
    this.lastAborted = false;
    const matcher = this.re2.matcher(input);
    let out = '';
    let last = 0;
    let matched = false;
    let position = 0;
    while (position <= input.length && matcher.find(position)) {
      const spans: number[] = [];
      for (let g = 0; g <= this.groupCount; g++) spans.push(matcher.start(g), matcher.end(g));
      if (this.sticky && spans[0] !== position) break;
      const match = this.toMatch(input, spans);
      out += input.slice(last, match.index) + String(replacer(match));
      matched = true;
      last = match.end;
      if (!this.global) break;
      position = match.end === match.index ? this.advance(input, match.end) : match.end;
    }
    return matched ? out + input.slice(last) : input;
  }

  protected search(text: string, from: number): number[] | null {
    // One matcher per text: repeated finds go forward, so lookbehind state is carried (re2js README).
    if (this.matcher === null || this.matcherText !== text) {
      this.matcher = this.re2.matcher(text);
      this.matcherText = text;
    }
    const matcher = this.matcher;
    if (!matcher.find(from)) return null;
    const spans: number[] = [];
    for (let g = 0; g <= this.groupCount; g++) {
      spans.push(matcher.start(g), matcher.end(g));
    }
    return spans;
  }
}

class GuardedUserRegex extends BaseUserRegex {
  readonly engine = 'guarded' as const;

  constructor(
    source: string,
    flags: string,
    private readonly program: GuardedProgram,
    info: GroupInfo,
  ) {
    super(source, flags, info);
  }

  protected search(text: string, from: number): number[] | null | 'aborted' {
    return this.program.search(text, from, this.budget);
  }
}
