import { compileUserRegex, parseRegexLiteral, type UserRegex } from '../regex/user-regex';

/**
 * Key matching (external-formats.md §d.3, ST `matchKeys`), compiled once per key text:
 * - a `/pattern/flags` key (ST `parseRegexFromString`) runs on the raw scan text through the user-regex
 *   engine (linear where possible); case and whole-word settings do not apply. A pattern JavaScript cannot
 *   compile is a plain key, as in ST; a pattern our engines refuse never matches (warning).
 * - a plain key is compared on lower-cased text unless case-sensitive; with whole words, a single word must
 *   sit between non-word characters (ST's `(?:^|\W)(key)(?:$|\W)`, done here with `indexOf` and a JS `\W`
 *   test instead of a fresh RegExp), a key with whitespace is a substring test.
 */

export type CompiledKey =
  | { kind: 'regex'; text: string; regex: UserRegex; warning: null; prefilter: RegexPrefilter | null }
  | {
      kind: 'plain';
      text: string;
      lower: string;
      multiWord: boolean;
      /** Only JS word characters: a whole-word match is then "equals one word of the text". */
      wordOnly: boolean;
      /** No `\n` or `\x01`: a match can never straddle the joiner of an appended scan part. */
      appendSafe: boolean;
      /** Trigram hashes of `text` and `lower` (a few, spread over the key) for the `Haystack` trigram filter. */
      rawGrams: number[];
      lowerGrams: number[];
      warning: KeyWarning | null;
    }
  | { kind: 'never'; text: string; warning: KeyWarning };

export interface KeyWarning {
  code: 'invalid_key_regex' | 'unsupported_key_regex';
  message: string;
}

const WHITESPACE = /\s/;

export function compileKey(text: string): CompiledKey {
  const literal = parseRegexLiteral(text);
  if (literal) {
    const compiled = compileUserRegex(literal.source, literal.flags);
    if (compiled.ok) {
      return {
        kind: 'regex',
        text,
        regex: compiled.regex,
        warning: null,
        prefilter: regexPrefilter(literal.source, literal.flags),
      };
    }
    if (compiled.reason === 'unsupported') {
      return {
        kind: 'never',
        text,
        warning: {
          code: 'unsupported_key_regex',
          message: `regex key ${text} cannot run safely and never matches: ${compiled.message}`,
        },
      };
    }
    return {
      ...plainKey(text),
      warning: {
        code: 'invalid_key_regex',
        message: `regex key ${text} is not a valid pattern and is matched as plain text: ${compiled.message}`,
      },
    };
  }
  return plainKey(text);
}

const WORD_ONLY = /^[A-Za-z0-9_]+$/;

function plainKey(text: string): CompiledKey & { kind: 'plain' } {
  const lower = text.toLowerCase();
  return {
    kind: 'plain',
    text,
    lower,
    multiWord: WHITESPACE.test(text),
    wordOnly: WORD_ONLY.test(text),
    appendSafe: !text.includes('\n') && !text.includes('\x01'),
    rawGrams: sampleGrams(text),
    lowerGrams: sampleGrams(lower),
    warning: null,
  };
}

/**
 * A scan text with its lower-cased form, word sets and trigram filter made at most once. A text made by
 * appending `\n\x01` + `tail` to an earlier text (`base`: the recursion buffer growing by one pass, §d.6)
 * knows both: a plain key that did not match the base matches the whole text exactly when it matches the
 * tail (`keyMatchesAfterMiss`), because the joiner holds no word character, `\n` or `\x01` (so no appendSafe
 * key straddles it, and word boundaries and runs on either side are unchanged) and lower-casing is per
 * character there (final sigma sees `\n`/`\x01` as the text edge).
 */
export class Haystack {
  private lowered: string | null = null;
  private wordSets: [Set<string> | null, Set<string> | null] = [null, null];
  private gramSets: [Uint32Array | null, Uint32Array | null] = [null, null];
  readonly base: Haystack | null;
  readonly tail: Haystack | null;
  constructor(
    readonly raw: string,
    extension?: { base: Haystack; tail: string },
  ) {
    this.base = extension?.base ?? null;
    this.tail = extension ? new Haystack(extension.tail) : null;
  }
  get lower(): string {
    if (this.lowered === null) this.lowered = this.raw.toLowerCase();
    return this.lowered;
  }
  /** The maximal runs of JS word characters ([A-Za-z0-9_]) of the raw or lower-cased text. */
  words(caseSensitive: boolean): Set<string> {
    const slot = caseSensitive ? 0 : 1;
    let set = this.wordSets[slot];
    if (set === null) {
      set = wordRuns(caseSensitive ? this.raw : this.lower);
      this.wordSets[slot] = set;
    }
    return set;
  }
  /** A 65,536-bit filter of the trigrams of the raw or lower-cased text (false positives only). */
  grams(caseSensitive: boolean): Uint32Array {
    const slot = caseSensitive ? 0 : 1;
    let bits = this.gramSets[slot];
    if (bits === null) {
      bits = gramBits(caseSensitive ? this.raw : this.lower);
      this.gramSets[slot] = bits;
    }
    return bits;
  }
}

function gramHash(text: string, i: number): number {
  let h = Math.imul(text.charCodeAt(i), 0x01000193) ^ text.charCodeAt(i + 1);
  h = Math.imul(h, 0x01000193) ^ text.charCodeAt(i + 2);
  return Math.imul(h, 0x01000193) >>> 16;
}

function gramBits(text: string): Uint32Array {
  const bits = new Uint32Array(2048);
  for (let i = 0; i + 3 <= text.length; i++) {
    const h = gramHash(text, i);
    bits[h >>> 5]! |= 1 << (h & 31);
  }
  return bits;
}

/** Up to four trigram hashes spread over a key (none for a key shorter than three characters). */
function sampleGrams(text: string): number[] {
  const last = text.length - 3;
  if (last < 0) return [];
  const at = [...new Set([0, last, Math.floor(last / 3), Math.floor((2 * last) / 3)])];
  return at.map((i) => gramHash(text, i));
}

/** False when some trigram of the key is surely absent from the text (then the key cannot occur in it). */
function gramsMayOccur(bits: Uint32Array, grams: number[]): boolean {
  for (const h of grams) if ((bits[h >>> 5]! & (1 << (h & 31))) === 0) return false;
  return true;
}

function wordRuns(text: string): Set<string> {
  const set = new Set<string>();
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const word = i < text.length && isWordChar(text.charCodeAt(i));
    if (word && start === -1) start = i;
    else if (!word && start !== -1) {
      set.add(text.slice(start, i));
      start = -1;
    }
  }
  return set;
}

/** JS `\w`: [A-Za-z0-9_]. */
function isWordChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
  );
}

/** First index of `needle` in `hay` with a non-word character (or the text edge) on both sides, or -1. */
export function wholeWordIndex(hay: string, needle: string): number {
  let i = hay.indexOf(needle);
  while (i !== -1) {
    const end = i + needle.length;
    const beforeOk = i === 0 || !isWordChar(hay.charCodeAt(i - 1));
    const afterOk = end >= hay.length || !isWordChar(hay.charCodeAt(end));
    if (beforeOk && afterOk) return i;
    i = hay.indexOf(needle, i + 1);
  }
  return -1;
}

export interface KeyMatchOptions {
  caseSensitive: boolean;
  matchWholeWords: boolean;
}

/** Where a key matches: [start, end) in the raw text (offsets in the lower-cased text for plain keys). */
export function findKey(key: CompiledKey, hay: Haystack, options: KeyMatchOptions): [number, number] | null {
  switch (key.kind) {
    case 'never':
      return null;
    case 'regex': {
      if (key.prefilter && !prefilterPasses(key.prefilter, hay)) return null;
      const m = key.regex.firstMatch(hay.raw);
      return m ? [m.index, m.end] : null;
    }
    case 'plain': {
      const text = options.caseSensitive ? hay.raw : hay.lower;
      const needle = options.caseSensitive ? key.text : key.lower;
      const at =
        options.matchWholeWords && !key.multiWord ? wholeWordIndex(text, needle) : text.indexOf(needle);
      return at === -1 ? null : [at, at + needle.length];
    }
  }
}

export function keyMatches(key: CompiledKey, hay: Haystack, options: KeyMatchOptions): boolean {
  switch (key.kind) {
    case 'never':
      return false;
    case 'regex':
      if (key.prefilter && !prefilterPasses(key.prefilter, hay)) return false;
      return key.regex.test(hay.raw);
    case 'plain':
      return plainMatchesIn(key, hay, options);
  }
}

/**
 * `keyMatches` for a key known not to match `hay.base`: a plain appendSafe key only needs the appended tail;
 * any other key (regex, or a plain key holding `\n`/`\x01`) is tested on the whole text.
 */
export function keyMatchesAfterMiss(key: CompiledKey, hay: Haystack, options: KeyMatchOptions): boolean {
  if (key.kind === 'plain' && key.appendSafe && hay.tail !== null)
    return plainMatchesIn(key, hay.tail, options);
  return keyMatches(key, hay, options);
}

type PlainKey = CompiledKey & { kind: 'plain' };

function plainMatchesIn(key: PlainKey, hay: Haystack, options: KeyMatchOptions): boolean {
  const cs = options.caseSensitive;
  const needle = cs ? key.text : key.lower;
  // A key of word characters only matches whole-word exactly when it is one of the text's word runs.
  if (options.matchWholeWords && !key.multiWord && key.wordOnly) return hay.words(cs).has(needle);
  if (!gramsMayOccur(hay.grams(cs), cs ? key.rawGrams : key.lowerGrams)) return false;
  const text = cs ? hay.raw : hay.lower;
  if (!options.matchWholeWords || key.multiWord) return text.includes(needle);
  return wholeWordIndex(text, needle) !== -1;
}

/**
 * A literal every match of a regex key must contain (a cheap `includes` before running the pattern, as RE2's
 * prefilter does). Conservative: no top-level alternation; groups, classes, escapes with a meaning, `.` and
 * anchors end a literal run; an atom made optional by `?`, `*` or `{0,…}` is dropped; `+` or `{n,…}` keeps one
 * copy and ends the run. With the `i` flag only ASCII characters other than s take part (s folds with ſ, which
 * lower-cases to itself; k folds with the Kelvin sign K, which lower-cases to k, so k may take part), and the
 * test runs on the lower-cased text.
 */
export interface RegexPrefilter {
  literal: string;
  caseInsensitive: boolean;
}

const MEANINGFUL_ESCAPES = new Set('dDwWsSbBpPkcxuvfnrt0123456789'.split(''));

export function regexPrefilter(source: string, flags: string): RegexPrefilter | null {
  const ci = flags.includes('i');
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  const usable = (c: string) => {
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) return false; // a quantifier may take the whole code point (u)
    return !ci || (code < 128 && c !== 's' && c !== 'S');
  };
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      if (depth > 0 || inClass) continue;
      const e = source[i];
      if (e === undefined || MEANINGFUL_ESCAPES.has(e) || /[A-Za-z]/.test(e)) {
        end();
        continue;
      }
      i = literalAtom(e, i);
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      end();
      continue;
    }
    if (c === '(') {
      depth++;
      end();
      continue;
    }
    if (c === ')') {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (depth > 0) continue;
    if (c === '|') return null;
    if ('.^$*+?'.includes(c)) {
      end();
      continue;
    }
    if (c === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i))) {
      end();
      continue;
    }
    i = literalAtom(c, i);
  }
  end();
  if (depth !== 0 || inClass) return null;
  if (!best) return null;
  return { literal: ci ? best.toLowerCase() : best, caseInsensitive: ci };

  /** A literal character at `i` (already read as `c`): add it per the quantifier after it; returns the last index used. */
  function literalAtom(c: string, i: number): number {
    const rest = source.slice(i + 1);
    const q = /^(\*|\?|\+|\{(\d+)(,\d*)?\})\??/.exec(rest);
    if (!q) {
      if (usable(c)) run += c;
      else end();
      return i;
    }
    const optional = q[1] === '*' || q[1] === '?' || (q[2] !== undefined && Number(q[2]) === 0);
    if (!optional && usable(c)) run += c;
    end();
    return i + q[0].length;
  }
}

function prefilterPasses(prefilter: RegexPrefilter, hay: Haystack): boolean {
  return (prefilter.caseInsensitive ? hay.lower : hay.raw).includes(prefilter.literal);
}
