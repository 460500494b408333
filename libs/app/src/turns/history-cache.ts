import type { LineRange, TurnHistoryRow } from '@hearth/persistence';

/**
 * The messages of committed floors, per session and history revision (docs/decisions.md "Turn history
 * cache"). A committed floor's active content only changes through writes that add a row to
 * `session_history_edits` (migration 20261122150000), so under one revision a floor read once reads
 * the same again: a turn asks only for the floors it has not seen (after a respond, just the new
 * one). A new revision drops the session's floors. Any number of replicas may cache: the revision
 * comes from the database with the turn's branch read, before the rows are read, so rows cached under
 * a revision are never older than it.
 *
 * Bounded by the characters of cached content (least recently used session out). Only floors up to a
 * committed parent are ever put here (a lineage below a committed floor is committed throughout).
 */
export class TurnHistoryCache {
  private readonly sessions = new Map<string, SessionHistory>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /**
   * The history of `ranges` (a lineage clipped to the parent floor), oldest first: cached floors from
   * memory, the rest through `read` (called at most once, with the missing sub-ranges).
   */
  async history(
    sessionId: string,
    revision: string,
    ranges: LineRange[],
    read: (missing: LineRange[]) => Promise<TurnHistoryRow[]>,
  ): Promise<TurnHistoryRow[]> {
    let entry = this.sessions.get(sessionId);
    if (entry && entry.revision !== revision) {
      this.drop(sessionId, entry);
      entry = undefined;
    }
    if (entry) {
      // Most recently used last.
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, entry);
    }

    const missing: LineRange[] = [];
    for (const range of ranges) {
      const floors = entry?.lines.get(range.line_id);
      let lo: number | null = null;
      for (let no = range.lo; no <= range.hi; no++) {
        if (floors?.has(no)) {
          if (lo !== null) missing.push({ line_id: range.line_id, lo, hi: no - 1 });
          lo = null;
        } else if (lo === null) lo = no;
      }
      if (lo !== null) missing.push({ line_id: range.line_id, lo, hi: range.hi });
    }

    if (missing.length > 0) {
      const rows = await read(missing);
      if (!entry) {
        entry = { revision, lines: new Map(), chars: 0 };
        this.sessions.set(sessionId, entry);
      }
      const byFloor = new Map<string, TurnHistoryRow[]>();
      for (const row of rows) {
        const key = `${row.line_id}\n${row.floor_no}`;
        const list = byFloor.get(key);
        if (list) list.push(row);
        else byFloor.set(key, [row]);
      }
      for (const range of missing) {
        let floors = entry.lines.get(range.line_id);
        if (!floors) {
          floors = new Map();
          entry.lines.set(range.line_id, floors);
        }
        for (let no = range.lo; no <= range.hi; no++) {
          const list = byFloor.get(`${range.line_id}\n${no}`) ?? [];
          floors.set(no, list);
          this.count(entry, list);
        }
      }
      this.evict(sessionId);
    }

    // Oldest first: the ranges of a lineage never share a floor number.
    const ordered = [...ranges].sort((a, b) => a.lo - b.lo);
    const out: TurnHistoryRow[] = [];
    for (const range of ordered) {
      const floors = entry?.lines.get(range.line_id);
      for (let no = range.lo; no <= range.hi; no++) {
        const list = floors?.get(no);
        if (list) for (const row of list) out.push(row);
      }
    }
    return out;
  }

  /**
   * A floor the caller has just committed (its content is exactly `rows`), added to the session's
   * floors only when they are held under the revision the caller's turn read: a change since then has
   * a newer revision and drops them anyway.
   */
  addFloor(
    sessionId: string,
    revision: string,
    lineId: string,
    floorNo: number,
    rows: TurnHistoryRow[],
  ): void {
    const entry = this.sessions.get(sessionId);
    if (!entry || entry.revision !== revision) return;
    let floors = entry.lines.get(lineId);
    if (!floors) {
      floors = new Map();
      entry.lines.set(lineId, floors);
    }
    if (floors.has(floorNo)) return;
    floors.set(floorNo, rows);
    this.count(entry, rows);
    this.evict(sessionId);
  }

  /** Sessions held and characters counted (tests). */
  stats(): { sessions: number; chars: number } {
    return { sessions: this.sessions.size, chars: this.chars };
  }

  clear(): void {
    this.sessions.clear();
    this.chars = 0;
  }

  /** Adds a floor's rows to the bound: their characters plus an allowance per row and floor. */
  private count(entry: SessionHistory, rows: TurnHistoryRow[]): void {
    const size = rows.reduce((sum, row) => sum + row.content.length + 64, 64);
    entry.chars += size;
    this.chars += size;
  }

  private drop(sessionId: string, entry: SessionHistory): void {
    this.sessions.delete(sessionId);
    this.chars -= entry.chars;
  }

  /**
   * Least recently used sessions out until under the bound; the session just read goes last (a
   * session larger than the whole bound is not kept: the caller still has its rows).
   */
  private evict(keep: string): void {
    for (const [id, entry] of this.sessions) {
      if (this.chars <= this.maxChars) return;
      if (id !== keep) this.drop(id, entry);
    }
    const kept = this.sessions.get(keep);
    if (kept && this.chars > this.maxChars) this.drop(keep, kept);
  }
}

interface SessionHistory {
  revision: string;
  /** line id -> floor number -> the floor's active messages (empty: a floor without any). */
  lines: Map<string, Map<number, TurnHistoryRow[]>>;
  chars: number;
}
