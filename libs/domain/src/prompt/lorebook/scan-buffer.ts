import { SCAN_SOURCE_FLAGS, type LorebookScanSourceKind } from './entry';
import { Haystack, SCAN_UNITS, type ScanMeter } from './matcher';
import { LOREBOOK_MAX_SCAN_DEPTH } from './settings';

/**
 * ST's `WorldInfoBuffer` (external-formats.md §d.2): messages newest first (each trimmed), the text scanned
 * for an entry is `\x01` + the N newest joined by `\n\x01`, then the extra sources the entry asks for, the
 * extension prompts marked "scan", then the recursion buffer (not during a min-activations pass). Texts are
 * built once per (depth, sources, recursion) shape and pass, and lower-cased once. A text with recursion is
 * the same shape's text of the previous pass plus `\n\x01` + the newest recursion part, and says so (its
 * `base`), so plain keys only scan the new part in later passes (matcher.ts `Haystack`).
 */

const MATCHER = '\x01';
const JOINER = '\n\x01';

export type ScanSegmentKind = 'message' | LorebookScanSourceKind | 'extension_prompt' | 'recursion';

export interface ScanSegment {
  kind: ScanSegmentKind;
  /** For messages: 0 = newest. */
  messageIndex: number | null;
  start: number;
  end: number;
}

export class ScanText extends Haystack {
  constructor(
    raw: string,
    readonly segments: ScanSegment[],
    extension?: { base: ScanText; tail: string },
  ) {
    super(raw, extension);
  }

  /** The segment holding offset `at`. */
  segmentAt(at: number): ScanSegment | null {
    for (const s of this.segments) if (at >= s.start && at <= s.end) return s;
    return null;
  }
}

const EMPTY = new ScanText('', []);

export class ScanBuffer {
  private readonly depthBuffer: string[];
  private readonly recurse: string[] = [];
  private skew = 0;
  private cache = new Map<string, ScanText>();
  private last: { depth: number; mask: number; withRecurse: boolean; text: ScanText } | null = null;

  constructor(
    /** Messages newest first, already `Name: text` when names are included. */
    messages: string[],
    private readonly globalDepth: number,
    private readonly sources: Partial<Record<LorebookScanSourceKind, string>>,
    private readonly injects: string[],
    /** Building a text is scan work (one text per distinct entry scan depth and sources, per pass). */
    private readonly meter?: ScanMeter,
  ) {
    this.depthBuffer = messages.slice(0, LOREBOOK_MAX_SCAN_DEPTH).map((m) => m.trim());
  }

  getDepth(): number {
    return this.globalDepth + this.skew;
  }

  advanceScan(): void {
    this.skew++;
    this.cache.clear();
    this.last = null;
  }

  addRecurse(text: string): void {
    this.recurse.push(text);
    // Earlier texts stay cached (their key holds the recursion count): they are the bases of the next ones.
    this.last = null;
  }

  hasRecurse(): boolean {
    return this.recurse.length > 0;
  }

  /** The text an entry scans this pass (`minActivations` = a min-activations pass, no recursion buffer). */
  get(entryScanDepth: number | null, sourceMask: number, minActivations: boolean): ScanText {
    let depth = entryScanDepth ?? this.getDepth();
    if (depth <= 0) return EMPTY;
    if (depth > LOREBOOK_MAX_SCAN_DEPTH) depth = LOREBOOK_MAX_SCAN_DEPTH;
    const withRecurse = !minActivations && this.recurse.length > 0;
    const last = this.last;
    if (last && last.depth === depth && last.mask === sourceMask && last.withRecurse === withRecurse)
      return last.text;
    const recursed = withRecurse ? this.recurse.length : 0;
    const cacheKey = `${depth}|${sourceMask}|${recursed}`;
    const hit = this.cache.get(cacheKey);
    if (hit) {
      this.last = { depth, mask: sourceMask, withRecurse, text: hit };
      return hit;
    }

    if (this.meter?.exhausted) return EMPTY;
    const segments: ScanSegment[] = [];
    let raw = MATCHER;
    const messages = this.depthBuffer.slice(0, depth);
    messages.forEach((message, index) => {
      if (index > 0) raw += JOINER;
      segments.push({
        kind: 'message',
        messageIndex: index,
        start: raw.length,
        end: raw.length + message.length,
      });
      raw += message;
    });
    const push = (kind: ScanSegmentKind, text: string) => {
      raw += JOINER;
      segments.push({ kind, messageIndex: null, start: raw.length, end: raw.length + text.length });
      raw += text;
    };
    SCAN_SOURCE_FLAGS.forEach(([kind], i) => {
      const text = this.sources[kind];
      if (sourceMask & (1 << i) && text) push(kind, text);
    });
    if (this.injects.length > 0) for (const text of this.injects) push('extension_prompt', text);
    if (withRecurse) for (const text of this.recurse) push('recursion', text);
    // Past the meter's limit an entry scans nothing (its keys would not be tested anyway).
    if (this.meter && !this.meter.charge(raw.length * SCAN_UNITS.textBuilt)) return EMPTY;
    const base = withRecurse ? this.cache.get(`${depth}|${sourceMask}|${recursed - 1}`) : undefined;
    const result = new ScanText(
      raw,
      segments,
      base ? { base, tail: this.recurse[recursed - 1]! } : undefined,
    );
    this.cache.set(cacheKey, result);
    this.last = { depth, mask: sourceMask, withRecurse, text: result };
    return result;
  }
}
