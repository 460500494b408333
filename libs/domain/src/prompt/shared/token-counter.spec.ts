import { encodingForModel, tokenCounter } from './token-counter';

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

  it('picks cl100k for the GPT-4/3.5 family and o200k otherwise', () => {
    expect(encodingForModel('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4o')).toBe('o200k_base');
    expect(encodingForModel('claude-3-5-sonnet')).toBe('o200k_base');
    expect(encodingForModel(null)).toBe('o200k_base');
  });
});
