import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { encodingForModel, tokenCounter } from './token-counter';

/** The piecewise counting before long runs were cut (2,000-character pieces cut after a space or newline). */
function piecewise(text: string): number {
  if (text.length <= 2_000) return countTokens(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + 2_000);
    if (end < text.length) {
      const cut = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
      if (cut > start + 1_000) end = cut + 1;
    }
    total += countTokens(text.slice(start, end));
    start = end;
  }
  return total;
}

/** A deterministic pseudo-random text from `alphabet`. */
function randomText(alphabet: string, length: number, seed = 7): string {
  const chars = [...alphabet];
  let state = seed;
  let out = '';
  while (out.length < length) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += chars[state % chars.length];
  }
  return out.slice(0, length);
}

const HAN =
  '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多天而能好';

describe('token counter', () => {
  const counter = tokenCounter();
  it('counts short texts exactly and empty text as zero', () => {
    expect(counter.count('')).toBe(0);
    expect(counter.count('hello world')).toBe(2);
  });

  it('counts a 200,000-character run without spaces in bounded time, close to the whole count', () => {
    const run = 'ab'.repeat(100_000);
    const pieces = counter.count(run);
    expect(pieces).toBeGreaterThan(0);
    // Long spaced text: piecewise counting stays within a token per piece of the exact count.
    const spaced = 'the quick brown fox jumps over the lazy dog '.repeat(500);
    const exact = tokenCounter().count(spaced.slice(0, 2_000));
    expect(exact).toBeGreaterThan(0);
    const total = counter.count(spaced);
    expect(Math.abs(total - 9 * 500)).toBeLessThanOrEqual(Math.ceil(spaced.length / 2_000) * 2);
  });

  it('prose counts as before long runs were cut: English, Chinese with its punctuation, mixed, and ≤ 2,000 characters', () => {
    const words = randomText('abcdefghijklmnopqrstuvwxyz     \n.,', 20_000);
    let chinese = '';
    for (let i = 0; chinese.length < 20_000; i++)
      chinese += randomText(HAN, 5 + (i % 60), i) + '，。\n'[i % 3];
    const mixed = words.slice(0, 10_000) + chinese.slice(0, 10_000) + 'Ünïcödé ¡¿ 123456789 '.repeat(300);
    for (const text of [words, chinese, mixed, randomText(HAN, 2_000), 'x'.repeat(2_000)]) {
      expect(counter.count(text)).toBe(piecewise(text));
    }
  });

  it('a run longer than 256 characters is counted in cuts of at most 256 UTF-8 bytes', () => {
    // 3,000 CJK characters, no space: pieces [0, 2,000) and [2,000, 3,000), each cut every 85 characters.
    const run = randomText(HAN, 3_000);
    let expected = 0;
    for (const [start, end] of [
      [0, 2_000],
      [2_000, 3_000],
    ]) {
      for (let at = start; at < end; at += 85) expected += countTokens(run.slice(at, Math.min(at + 85, end)));
    }
    expect(counter.count(run)).toBe(expected);
    // Astral letters are never cut between their halves.
    const astral = '𠀀𠀁𠀂'.repeat(1_000);
    expect(counter.count(astral)).toBe(piecewise(astral));
  });

  it('the count of a space-free run moves by well under 1 %, and the same text always counts the same', () => {
    for (const alphabet of [HAN, 'abcdefghijklmnopqrstuvwxyz', 'абвгдежзийклмнопрстуфхцчшщъыьэюя']) {
      const text = randomText(alphabet, 10_000);
      const count = counter.count(text);
      expect(Math.abs(count - piecewise(text)) / piecewise(text)).toBeLessThan(0.01);
      expect(counter.count(text)).toBe(count);
    }
  });

  it('special-token texts are counted as text, never thrown on', () => {
    expect(counter.count('<|endoftext|>')).toBe(
      countTokens('<|endoftext|>', { disallowedSpecial: new Set() }),
    );
    expect(counter.count('<|endoftext|>')).toBeGreaterThan(1);
    expect(tokenCounter('cl100k_base').count('a <|im_start|> b')).toBeGreaterThan(3);
  });

  it('picks cl100k for the GPT-4/3.5 family and o200k otherwise', () => {
    expect(encodingForModel('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4o')).toBe('o200k_base');
    expect(encodingForModel('claude-3-5-sonnet')).toBe('o200k_base');
    expect(encodingForModel(null)).toBe('o200k_base');
  });
});
