import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * Token counting for prompt budgets (reference/performance-and-reliability.md, P10): one library
 * (gpt-tokenizer) loaded once per process. `o200k_base` is the default and the estimate for models
 * without a local tokenizer (Claude, Gemini). The engine never re-counts text whose count it was given.
 */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

export interface TokenCounter {
  readonly encoding: TokenEncoding;
  count(text: string): number;
}

/**
 * Byte-pair encoding is quadratic in the length of a run without spaces (a 200,000-character run takes
 * tens of seconds), so long texts are counted in pieces of at most `PIECE` characters, cut after a space
 * or newline where there is one. Pieces cost at most a token or two at each cut: an estimate, as every
 * count here is, and always the same for the same text.
 */
const PIECE = 2_000;

function countInPieces(text: string, count: (t: string) => number): number {
  if (text.length === 0) return 0;
  if (text.length <= PIECE) return count(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE);
    if (end < text.length) {
      const cut = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
      if (cut > start + PIECE / 2) end = cut + 1;
    }
    total += count(text.slice(start, end));
    start = end;
  }
  return total;
}

const counters: Record<TokenEncoding, TokenCounter> = {
  o200k_base: { encoding: 'o200k_base', count: (text) => countInPieces(text, countO200k) },
  cl100k_base: { encoding: 'cl100k_base', count: (text) => countInPieces(text, countCl100k) },
};

/** The encoding a model's prompt is counted with: cl100k for the GPT-3.5/GPT-4 family, o200k otherwise. */
export function encodingForModel(modelId: string | null | undefined): TokenEncoding {
  const id = (modelId ?? '').toLowerCase();
  if (/^(gpt-3\.5|gpt-4(?!o|\.1|\.5)|text-embedding)/.test(id)) return 'cl100k_base';
  return 'o200k_base';
}

export function tokenCounter(encoding: TokenEncoding = 'o200k_base'): TokenCounter {
  return counters[encoding];
}
