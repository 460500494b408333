import { findKey, type CompiledKey, type KeyMatchOptions } from './matcher';
import type { ScanText } from './scan-buffer';
import type { ActivatedLorebookEntry, LorebookFirstMatch, LorebookMatch } from './types';

/** Spec 2 match detail: the first primary key match and the `worldbook_matches` item. */

const EXCERPT_RADIUS = 30;
const CONTENT_PREVIEW = 120;

export function describeMatch(
  key: CompiledKey,
  text: ScanText,
  options: KeyMatchOptions,
): LorebookFirstMatch | null {
  const at = findKey(key, text, options);
  if (!at) return null;
  const [start, end] = at;
  const segment = text.segmentAt(start);
  const base = segment ? segment.start : 0;
  const limit = segment ? segment.end : text.raw.length;
  const from = Math.max(base, start - EXCERPT_RADIUS);
  const to = Math.min(limit, end + EXCERPT_RADIUS);
  return {
    source_kind: segment?.kind ?? 'message',
    message_index_from_latest: segment?.messageIndex ?? null,
    matched_key: key.text,
    matched_key_scope: 'primary',
    matched_key_type: key.kind === 'regex' ? 'regex' : 'plain',
    char_start: start - base,
    char_end: Math.min(end, limit) - base,
    excerpt: text.raw.slice(from, to),
  };
}

export function matchItem(a: ActivatedLorebookEntry, firstMatch: LorebookFirstMatch | null): LorebookMatch {
  return {
    uid: a.uid,
    comment: a.comment,
    content_preview: a.content.slice(0, CONTENT_PREVIEW),
    order: a.order,
    source: { kind: a.source, worldbook_id: a.bookId, worldbook_name: a.bookName },
    insertion: {
      position: a.position,
      depth: a.position === 4 ? a.depth : null,
      role: a.position === 4 ? a.role : null,
      outlet_name: a.position === 7 ? a.outletName : null,
    },
    activation: { mode: a.mode, pass: a.pass, recursion_level: a.recursionLevel, first_match: firstMatch },
  };
}
