/**
 * What an operation log may hold (spec 3 "Operation log"): references and summaries only, never
 * full prompts, messages, model output, tool arguments or results, or keys. Sensitive fields are
 * masked wherever they appear in refs, diffs or metadata.
 */
const SENSITIVE =
  /(api[_-]?key|secret|password|token(?!_count|s?_total|_budget)|authorization|credential|private[_-]?key)/i;
const CONTENT = /^(content|prompt|messages|output|text|value|tool_arguments|tool_result|raw)$/i;

export const MASK = '***';
export const DIFF_MAX_BYTES = 16000;
const utf8 = new TextEncoder();

export function maskSensitive(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[depth]';
  if (Array.isArray(value)) return value.map((v) => maskSensitive(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (SENSITIVE.test(key)) out[key] = inner === null || inner === undefined ? inner : MASK;
      else if (CONTENT.test(key) && typeof inner === 'string') out[key] = `[${inner.length} chars]`;
      else out[key] = maskSensitive(inner, depth + 1);
    }
    return out;
  }
  return value;
}

export interface DiffSummary {
  mode: 'summary';
  total_changes: number;
  changes: Array<{ path: string; change_type: 'added' | 'removed' | 'changed' }>;
  truncated: boolean;
  max_bytes: number;
}

/** A path-level summary of what changed between two snapshots; values are not copied. */
export function summariseDiff(before: unknown, after: unknown, maxBytes = DIFF_MAX_BYTES): DiffSummary {
  const changes: DiffSummary['changes'] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    const aObj = a !== null && typeof a === 'object' && !Array.isArray(a);
    const bObj = b !== null && typeof b === 'object' && !Array.isArray(b);
    if (aObj && bObj) {
      const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
      for (const key of [...keys].sort()) {
        const av = (a as Record<string, unknown>)[key];
        const bv = (b as Record<string, unknown>)[key];
        const p = path ? `${path}.${key}` : key;
        if (av === undefined) changes.push({ path: p, change_type: 'added' });
        else if (bv === undefined) changes.push({ path: p, change_type: 'removed' });
        else walk(av, bv, p);
      }
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) changes.push({ path: path || '$', change_type: 'changed' });
  };
  walk(before ?? {}, after ?? {}, '');
  const summary: DiffSummary = {
    mode: 'summary',
    total_changes: changes.length,
    changes: [],
    truncated: false,
    max_bytes: maxBytes,
  };
  // UTF-8 bytes of the summary as it will be stored; every change after the first adds a comma.
  let bytes = utf8.encode(JSON.stringify(summary)).length;
  for (const change of changes) {
    const size = utf8.encode(JSON.stringify(change)).length + (summary.changes.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) {
      summary.truncated = true;
      break;
    }
    summary.changes.push(change);
    bytes += size;
  }
  return summary;
}
