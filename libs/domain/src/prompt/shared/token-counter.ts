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

/**
 * Inside a piece, a run of more than `RUN_MAX` letters (with marks), of more than `RUN_MAX` symbols
 * (neither letter, digit nor space) or of more than `RUN_MAX` spaces is one pre-token of the tokenizer,
 * which merges it in time quadratic in its UTF-8 bytes: such a run is counted in cuts of at most
 * `CUT_BYTES` bytes. Measured on 200,000 random characters (2-core VM under load, warm; before → after,
 * tokens added): a CJK run 1.7 s → 0.2-0.3 s (+30 on 197,000: 0.02 %), the same with a space every 2,000
 * characters the same, Cyrillic letters 0.9 s → 0.4 s (+0.2 %), Latin letters 0.35 s → 0.2 s (+0.1 %),
 * symbols 0.3 s → 0.2 s (+0.1 %), spaces and tabs 0.35 s → 0.08 s (3,140 → 3,440 tokens). Prose never
 * has such runs (Chinese and Japanese prose included: their punctuation ends a run), so its count is
 * unchanged, and so is every text of at most `PIECE` characters.
 */
const RUN_MAX = 256;
const CUT_BYTES = 256;
// Maximal runs (a greedy class repeat never backtracks, so the scan is linear; `{257,}` was not).
const RUN = /[\p{L}\p{M}]+|[^\s\p{L}\p{M}\p{N}]+|\s+/gu;

function countPiece(piece: string, count: (t: string) => number): number {
  let total = 0;
  let from = 0;
  for (const run of piece.matchAll(RUN)) {
    if (run[0].length <= RUN_MAX) continue;
    const runEnd = run.index + run[0].length;
    let bytes = 0;
    for (let i = run.index; i < runEnd;) {
      const code = piece.charCodeAt(i);
      const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < runEnd;
      const width = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
      if (bytes + width > CUT_BYTES) {
        total += count(piece.slice(from, i));
        from = i;
        bytes = 0;
      }
      bytes += width;
      i += pair ? 2 : 1;
    }
  }
  return total + count(from === 0 ? piece : piece.slice(from));
}

function countInPieces(text: string, count: (t: string) => number): number {
  if (text.length === 0) return 0;
  if (text.length <= PIECE) return count(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE);
    if (end < text.length) {
      // The last space or newline in the piece's second half: searched there only (`lastIndexOf` from
      // `end` runs back to the text's start when there is none: 2.6 s for 1 MB without spaces, 20 s for
      // 4.5 MB, which a chat import can hold in one message).
      for (let i = end; i > start + PIECE / 2; i--) {
        const code = text.charCodeAt(i);
        if (code === 32 || code === 10) {
          end = i + 1;
          break;
        }
      }
    }
    total += countPiece(text.slice(start, end), count);
    start = end;
  }
  return total;
}

/**
 * Special-token texts (`<|endoftext|>`, …) in a message are counted as the text they are: gpt-tokenizer
 * throws on them by default, which made any text holding one fail to count.
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const o200k = (text: string) => countO200k(text, AS_TEXT);
const cl100k = (text: string) => countCl100k(text, AS_TEXT);

const counters: Record<TokenEncoding, TokenCounter> = {
  o200k_base: { encoding: 'o200k_base', count: (text) => countInPieces(text, o200k) },
  cl100k_base: { encoding: 'cl100k_base', count: (text) => countInPieces(text, cl100k) },
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
