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

const counters: Record<TokenEncoding, TokenCounter> = {
  o200k_base: { encoding: 'o200k_base', count: (text) => (text.length === 0 ? 0 : countO200k(text)) },
  cl100k_base: { encoding: 'cl100k_base', count: (text) => (text.length === 0 ? 0 : countCl100k(text)) },
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
