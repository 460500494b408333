/**
 * Small pieces of SillyTavern 1.18 (and the libraries it bundles) that macro results depend on, ported so
 * the engine reproduces ST's values: `getStringHash` (utils.js, cyrb53), `seedrandom` (the ARC4 generator
 * ST seeds `{{pick}}` with), `droll` (dice formulas of `{{roll}}`) and `isFalseBoolean` (utils.js).
 * Pure functions, no I/O.
 */
import type { RandomSource } from '../shared/seeded-random';

/** ST `getStringHash(str, seed = 0)`: cyrb53, a 53-bit integer. `chat_metadata.chat_id_hash` is one of these. */
export function getStringHash(str: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const WIDTH = 256;
const MASK = 255;
const CHUNKS = 6;
const START_DENOM = Math.pow(WIDTH, CHUNKS);
const SIGNIFICANCE = Math.pow(2, 52);
const OVERFLOW = SIGNIFICANCE * 2;

/**
 * `seedrandom(seed)` (davidbau/seedrandom 3.x, the ARC4 default ST uses for `{{pick}}`). A string seed is
 * mixed as is; a number seed is flattened to `String(n) + '\0'` exactly as seedrandom does.
 */
export function seedrandom(seed: string | number): RandomSource {
  const seedString = typeof seed === 'string' ? seed : `${seed}\0`;
  const key: number[] = [];
  let smear = 0;
  for (let j = 0; j < seedString.length; j++) {
    smear ^= (key[MASK & j] ?? 0) * 19;
    key[MASK & j] = MASK & (smear + seedString.charCodeAt(j));
  }
  const s: number[] = [];
  let keylen = key.length;
  const k = keylen ? key : [keylen++];
  for (let i = 0; i < WIDTH; i++) s[i] = i;
  let j = 0;
  for (let i = 0; i < WIDTH; i++) {
    const t = s[i];
    j = MASK & (j + k[i % keylen] + t);
    s[i] = s[j];
    s[j] = t;
  }
  let si = 0;
  let sj = 0;
  const g = (count: number): number => {
    let r = 0;
    while (count--) {
      si = MASK & (si + 1);
      const t = s[si];
      sj = MASK & (sj + t);
      s[si] = s[sj];
      s[sj] = t;
      r = r * WIDTH + s[MASK & (s[si] + s[sj])];
    }
    return r;
  };
  g(WIDTH); // RC4-drop[256]
  return () => {
    let n = g(CHUNKS);
    let d = START_DENOM;
    let x = 0;
    while (n < SIGNIFICANCE) {
      n = (n + x) * WIDTH;
      d *= WIDTH;
      x = g(1);
    }
    while (n >= OVERFLOW) {
      n /= 2;
      d /= 2;
      x >>>= 1;
    }
    return (n + x) / d;
  };
}

/** ST utils `isFalseBoolean`: 'false', 'off', '0' (trimmed, case-insensitive). */
export function isFalseBoolean(value: string): boolean {
  return ['false', 'off', '0'].includes(value.trim().toLowerCase());
}

/** ST utils `isTrueBoolean`: 'true', 'on', '1'. */
export function isTrueBoolean(value: string): boolean {
  return ['true', 'on', '1'].includes(value.trim().toLowerCase());
}

export interface DiceFormula {
  numDice: number;
  numSides: number;
  modifier: number;
}

/** droll's grammar: `[N]dS[+|-M]` (N, S positive integers without leading zero). Invalid → null. */
export function parseDice(formula: string): DiceFormula | null {
  const pieces = /^([1-9]\d*)?d([1-9]\d*)([+-]\d+)?$/i.exec(formula);
  if (!pieces) return null;
  return {
    numDice: Number(pieces[1] ?? '') || 1,
    numSides: Number(pieces[2]),
    modifier: Number(pieces[3] ?? '') || 0,
  };
}

/** droll.roll with a seeded source: each die is `floor(random * sides) + 1`, total adds the modifier. */
export function rollDice(dice: DiceFormula, random: RandomSource): number {
  let total = 0;
  for (let i = 0; i < dice.numDice; i++) total += Math.floor(random() * dice.numSides) + 1;
  return total + dice.modifier;
}

export function escapeRegex(text: string): string {
  return text.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
}

/**
 * `readSingleArgsRandomList` (core-macros.js) and the legacy list split of `{{random}}`/`{{pick}}`:
 * `::` wins over commas; with commas every item is trimmed and `\,` escapes a comma.
 */
export function splitLegacyList(listString: string, trimDoubleColonItems: boolean): string[] {
  if (listString.includes('::')) {
    const items = listString.split('::');
    return trimDoubleColonItems ? items.map((item) => item.trim()) : items;
  }
  const placeholder = '##\uFFFDCOMMA\uFFFD##';
  return listString
    .replace(/\\,/g, placeholder)
    .split(',')
    .map((item) => item.trim().split(placeholder).join(','));
}
