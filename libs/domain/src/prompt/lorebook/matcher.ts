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
  private wordHashSets: [Uint32Array | null, Uint32Array | null] = [null, null];
  /** Whole-word lookups of word-only keys answered by `indexOf` so far (the word set is built after a few). */
  readonly wordLookups: [number, number] = [0, 0];
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
  hasWords(caseSensitive: boolean): boolean {
    const slot = caseSensitive ? 0 : 1;
    return this.wordSets[slot] !== null || this.wordHashSets[slot] !== null;
  }
  /** A bit filter of the hashes of the word runs (false positives only), for texts too long for `words`. */
  wordHashes(caseSensitive: boolean): Uint32Array {
    const slot = caseSensitive ? 0 : 1;
    let bits = this.wordHashSets[slot];
    if (bits === null) {
      bits = wordHashBits(caseSensitive ? this.raw : this.lower);
      this.wordHashSets[slot] = bits;
    }
    return bits;
  }
  hasGrams(caseSensitive: boolean): boolean {
    return this.gramSets[caseSensitive ? 0 : 1] !== null;
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

function wordHash(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Bits sized to the text (at least 2^16, about 4 bits per character): few false positives. */
function wordHashBits(text: string): Uint32Array {
  let size = 1 << 16;
  while (size < text.length * 4 && size < 1 << 30) size *= 2;
  const bits = new Uint32Array(size >>> 5);
  const mask = size - 1;
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const word = i < text.length && isWordChar(text.charCodeAt(i));
    if (word && start === -1) start = i;
    else if (!word && start !== -1) {
      const h = wordHash(text, start, i) & mask;
      bits[h >>> 5]! |= 1 << (h & 31);
      start = -1;
    }
  }
  return bits;
}

function wordHashMayHave(bits: Uint32Array, needle: string): boolean {
  const h = wordHash(needle, 0, needle.length) & (bits.length * 32 - 1);
  return (bits[h >>> 5]! & (1 << (h & 31))) !== 0;
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

/**
 * First index of `needle` in `hay` with a non-word character (or the text edge) on both sides, or -1. Each
 * rejected occurrence costs another search: with a meter, each charges the needle's length (a 50,000-
 * character key overlapping itself along a 200,000-character text would compare ~10^9 characters).
 */
export function wholeWordIndex(hay: string, needle: string, meter?: ScanMeter): number {
  let i = hay.indexOf(needle);
  while (i !== -1) {
    const end = i + needle.length;
    const beforeOk = i === 0 || !isWordChar(hay.charCodeAt(i - 1));
    const afterOk = end >= hay.length || !isWordChar(hay.charCodeAt(end));
    if (beforeOk && afterOk) return i;
    if (meter && !meter.charge(needle.length * SCAN_UNITS.plain)) return -1;
    i = hay.indexOf(needle, i + 1);
  }
  return -1;
}

export interface KeyMatchOptions {
  caseSensitive: boolean;
  matchWholeWords: boolean;
  /** The activation's scan work meter (none: unmetered, as in tests of the matcher alone). */
  meter?: ScanMeter;
}

/**
 * Scan work of one activation, in units of about one character compared by `indexOf` (~0.25 ns): a key
 * test that has to read the text charges its length times the weight of the way it reads it. Past the limit
 * every further test that would read a text is a non-match and the meter is `exhausted` (the caller warns
 * `lorebook_scan_budget_exhausted`). The cost of a scan is keys x text length: 20,000 entries of 25 keys
 * over ten 20,000-character messages (substring matching) took 25 s, 100 lookahead regex keys over 200,000
 * characters 21 s. Normal books stay orders of magnitude below the limit (the 2,000-entry benchmark: about
 * 10^7 units per scan), and so does a heavy legitimate one (6,000 substring keys over a scan text of 600,000
 * characters: ~3.6 x 10^9): the limit is set for that, about one to two seconds of work of any one kind,
 * against 25-50 s for the hostile shapes above.
 */
export const SCAN_WORK_LIMIT = 4_000_000_000;
/**
 * Weights per character read: `indexOf`/`includes` 1, a word set built 32, the trigram filter built 8, the
 * linear regex engine 16, the step-bounded backtracking engine 1,024 (up to 30 steps per character), a scan
 * text built (and lower-cased) 16; and per entry visited in a pass 4,096 (a pass over 2,000 entries is ~8 x
 * 10^6). Calibrated on this machine so that 10^9 units are about half a second of work of any one kind.
 */
export const SCAN_UNITS = {
  plain: 1,
  wordSet: 32,
  grams: 8,
  linearRegex: 16,
  guardedRegex: 1024,
  textBuilt: 16,
  entryVisit: 4096,
} as const;

export class ScanMeter {
  used = 0;
  exhausted = false;
  constructor(readonly limit: number = SCAN_WORK_LIMIT) {}
  /** Takes `units` of work; false (and `exhausted`) when that would pass the limit. */
  charge(units: number): boolean {
    if (this.used + units > this.limit) {
      this.exhausted = true;
      return false;
    }
    this.used += units;
    return true;
  }
}

/** A word-only whole-word key is looked up in the text's word set once this many lookups used `indexOf`:
 * building the set costs ~30 scans of the text. */
const WORD_SET_AFTER_LOOKUPS = 32;
/**
 * Longer texts get a bit filter of word hashes instead of the set (splitting a 20,000,000-character text
 * into a set of strings took 10 s); a hit there is confirmed with `wholeWordIndex`.
 */
const WORD_SET_MAX_CHARS = 1_000_000;

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
    case 'regex': {
      const meter = options.meter;
      if (key.prefilter) {
        if (meter && !meter.charge(hay.raw.length * SCAN_UNITS.plain)) return false;
        if (!prefilterPasses(key.prefilter, hay)) return false;
      }
      const weight = key.regex.engine === 'linear' ? SCAN_UNITS.linearRegex : SCAN_UNITS.guardedRegex;
      if (meter && !meter.charge(hay.raw.length * weight)) return false;
      return key.regex.test(hay.raw);
    }
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
  const meter = options.meter;
  // A key of word characters only matches whole-word exactly when it is one of the text's word runs (the
  // set is built once enough keys asked; until then `wholeWordIndex` below gives the same answer).
  if (options.matchWholeWords && !key.multiWord && key.wordOnly) {
    const slot = cs ? 0 : 1;
    if (!hay.hasWords(cs) && ++hay.wordLookups[slot] > WORD_SET_AFTER_LOOKUPS) {
      if (meter && !meter.charge(hay.raw.length * SCAN_UNITS.wordSet)) return false;
    }
    if (hay.hasWords(cs) || hay.wordLookups[slot] > WORD_SET_AFTER_LOOKUPS) {
      if (hay.raw.length <= WORD_SET_MAX_CHARS) return hay.words(cs).has(needle);
      if (!wordHashMayHave(hay.wordHashes(cs), needle)) return false;
    }
  }
  if (!hay.hasGrams(cs) && meter && !meter.charge(hay.raw.length * SCAN_UNITS.grams)) return false;
  if (!gramsMayOccur(hay.grams(cs), cs ? key.rawGrams : key.lowerGrams)) return false;
  const text = cs ? hay.raw : hay.lower;
  if (meter && !meter.charge(text.length * SCAN_UNITS.plain)) return false;
  if (!options.matchWholeWords || key.multiWord) return text.includes(needle);
  return wholeWordIndex(text, needle, meter) !== -1;
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
