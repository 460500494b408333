import type { LorebookEntryView } from './entry';

/**
 * Timed effects (external-formats.md §d.9, ST `WorldInfoTimedEffects`; §j: they count messages). The state
 * is an input and an output of the engine; the caller stores it per floor. Records are keyed
 * `<book id>.<uid>` and found again by the entry's hash, so an edited entry does not inherit them.
 */

export interface LorebookTimedRecord {
  hash: string;
  /** Chat length when the effect started. */
  start: number;
  /** start + N. */
  end: number;
  protected: boolean;
}

export interface LorebookTimedState {
  sticky: Record<string, LorebookTimedRecord>;
  cooldown: Record<string, LorebookTimedRecord>;
}

export function emptyTimedState(): LorebookTimedState {
  return { sticky: {}, cooldown: {} };
}

export const timedKey = (entry: LorebookEntryView): string => `${entry.bookId}.${entry.uid}`;

function isRecord(v: unknown): v is LorebookTimedRecord {
  if (!v || typeof v !== 'object') return false;
  const r = v as Record<string, unknown>;
  return (
    (typeof r.hash === 'string' || typeof r.hash === 'number') &&
    Number.isFinite(Number(r.start)) &&
    Number.isFinite(Number(r.end))
  );
}

/** A defensive copy of the stored state; malformed records are dropped (count returned for a warning). */
export function cloneTimedState(state: unknown): { state: LorebookTimedState; dropped: number } {
  const out = emptyTimedState();
  let dropped = 0;
  if (!state || typeof state !== 'object') return { state: out, dropped };
  for (const type of ['sticky', 'cooldown'] as const) {
    const records = (state as Record<string, unknown>)[type];
    if (!records || typeof records !== 'object') continue;
    for (const [key, value] of Object.entries(records as Record<string, unknown>)) {
      if (!isRecord(value)) {
        dropped++;
        continue;
      }
      out[type][key] = {
        hash: String(value.hash),
        start: Number(value.start),
        end: Number(value.end),
        protected: value.protected === true,
      };
    }
  }
  return { state: out, dropped };
}

export class TimedEffects {
  private readonly active = {
    sticky: new Set<string>(),
    cooldown: new Set<string>(),
    delay: new Set<string>(),
  };

  constructor(
    readonly state: LorebookTimedState,
    private readonly chatLength: number,
    private readonly entries: LorebookEntryView[],
    private readonly dryRun: boolean,
  ) {}

  /** Start of a scan: expire records, start protected cooldowns after sticky, mark delayed entries. */
  check(): void {
    const hasRecords =
      Object.keys(this.state.sticky).length > 0 || Object.keys(this.state.cooldown).length > 0;
    if (!this.dryRun && hasRecords) {
      const byHash = new Map<string, LorebookEntryView>();
      for (const e of this.entries) if (!byHash.has(e.hash)) byHash.set(e.hash, e);
      this.checkType('sticky', byHash, (entry) => {
        if (!entry.cooldown) return;
        this.state.cooldown[timedKey(entry)] = this.record(entry, entry.cooldown, true);
        this.active.cooldown.add(entry.hash);
      });
      this.checkType('cooldown', byHash, () => undefined);
    }
    for (const entry of this.entries) {
      if (entry.delay && this.chatLength < entry.delay) this.active.delay.add(entry.hash);
    }
  }

  private record(entry: LorebookEntryView, n: number, isProtected: boolean): LorebookTimedRecord {
    return { hash: entry.hash, start: this.chatLength, end: this.chatLength + n, protected: isProtected };
  }

  private checkType(
    type: 'sticky' | 'cooldown',
    byHash: Map<string, LorebookEntryView>,
    onEnded: (entry: LorebookEntryView) => void,
  ): void {
    const records = this.state[type];
    for (const [key, value] of Object.entries(records)) {
      const entry = byHash.get(value.hash);
      if (this.chatLength <= value.start && !value.protected) {
        delete records[key]; // the chat did not advance (regenerate, swipe)
        continue;
      }
      if (!entry) {
        if (this.chatLength >= value.end) delete records[key];
        continue;
      }
      if (!entry[type]) {
        delete records[key];
        continue;
      }
      if (this.chatLength >= value.end) {
        delete records[key];
        onEnded(entry);
        continue;
      }
      this.active[type].add(entry.hash);
    }
  }

  isActive(type: 'sticky' | 'cooldown' | 'delay', entry: LorebookEntryView): boolean {
    return this.active[type].has(entry.hash);
  }

  /** End of a scan: activated entries with sticky/cooldown start their records (existing ones are kept). */
  setEffects(activated: LorebookEntryView[]): void {
    if (this.dryRun) return;
    for (const entry of activated) {
      for (const type of ['sticky', 'cooldown'] as const) {
        if (!entry[type]) continue;
        const key = timedKey(entry);
        if (!this.state[type][key]) this.state[type][key] = this.record(entry, entry[type], false);
      }
    }
  }
}
