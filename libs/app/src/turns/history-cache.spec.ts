import type { LineRange, TurnHistoryRow } from '@hearth/persistence';
import { TurnHistoryCache } from './history-cache';

/** Rows of floors `lo..hi` of a line: one user and one assistant message each (none for `empty`). */
function rowsOf(range: LineRange, empty: Set<number> = new Set()): TurnHistoryRow[] {
  const rows: TurnHistoryRow[] = [];
  for (let no = range.lo; no <= range.hi; no++) {
    if (empty.has(no)) continue;
    for (const role of ['user', 'assistant'] as const)
      rows.push({
        line_id: range.line_id,
        floor_no: no,
        message_id: `${range.line_id}-${no}-${role}`,
        role,
        content: `${role} ${no}`,
        is_hidden: false,
        token_count: 2,
        token_encoding: 'o200k_base',
      });
  }
  return rows;
}

/** A reader over an in-memory chat that records what it was asked for. */
function reader(empty: Set<number> = new Set()) {
  const asked: LineRange[][] = [];
  const read = async (missing: LineRange[]) => {
    asked.push(missing);
    return missing.flatMap((r) => rowsOf(r, empty));
  };
  return { asked, read };
}

const ids = (rows: TurnHistoryRow[]) => rows.map((r) => r.message_id);

describe('TurnHistoryCache', () => {
  it('reads a lineage once, then only the floors it has not seen', async () => {
    const cache = new TurnHistoryCache(1_000_000);
    const { asked, read } = reader();
    const first = await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(first).toHaveLength(20);
    const again = await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(ids(again)).toEqual(ids(first));
    expect(asked).toHaveLength(1);

    const grown = await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 11 }], read);
    expect(asked[1]).toEqual([{ line_id: 'L', lo: 10, hi: 11 }]);
    expect(ids(grown)).toEqual(ids(rowsOf({ line_id: 'L', lo: 0, hi: 11 })));
  });

  it('puts a lineage of several lines in floor order and reads only the missing middle', async () => {
    const cache = new TurnHistoryCache(1_000_000);
    const { asked, read } = reader();
    await cache.history('s1', '0', [{ line_id: 'A', lo: 0, hi: 2 }], read);
    await cache.history('s1', '0', [{ line_id: 'A', lo: 5, hi: 6 }], read);
    // A lineage: line B (floors 7-8) forked from line A at floor 6, newest line first as stored.
    const ranges = [
      { line_id: 'B', lo: 7, hi: 8 },
      { line_id: 'A', lo: 0, hi: 6 },
    ];
    const rows = await cache.history('s1', '0', ranges, read);
    expect(asked[2]).toEqual([
      { line_id: 'B', lo: 7, hi: 8 },
      { line_id: 'A', lo: 3, hi: 4 },
    ]);
    expect(rows.map((r) => `${r.line_id}${r.floor_no}`)).toEqual(
      ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'B7', 'B8'].flatMap((f) => [f, f]),
    );
  });

  it('remembers floors without messages, so they are not read again', async () => {
    const cache = new TurnHistoryCache(1_000_000);
    const { asked, read } = reader(new Set([1]));
    await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 2 }], read);
    const rows = await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 2 }], read);
    expect(asked).toHaveLength(1);
    expect(rows.map((r) => r.floor_no)).toEqual([0, 0, 2, 2]);
  });

  it('drops a session’s floors when its revision changes', async () => {
    const cache = new TurnHistoryCache(1_000_000);
    const { asked, read } = reader();
    await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 3 }], read);
    await cache.history('s1', '1', [{ line_id: 'L', lo: 0, hi: 3 }], read);
    expect(asked[1]).toEqual([{ line_id: 'L', lo: 0, hi: 3 }]);
    await cache.history('s1', '1', [{ line_id: 'L', lo: 0, hi: 3 }], read);
    expect(asked).toHaveLength(2);
  });

  it('keeps sessions apart and evicts the least recently used beyond its bound', async () => {
    // Each floor counts its characters plus overheads: about 200 characters per floor, 2,000 per session here.
    const cache = new TurnHistoryCache(4_500);
    const { asked, read } = reader();
    await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    await cache.history('s2', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(cache.stats().sessions).toBe(2);
    await cache.history('s1', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(asked).toHaveLength(2);
    await cache.history('s3', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    // s2 was the least recently used.
    expect(cache.stats().sessions).toBe(2);
    await cache.history('s2', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(asked).toHaveLength(4);
    expect(cache.stats().chars).toBeLessThanOrEqual(4_500);
  });

  it('does not keep a session larger than the whole bound, and still answers it', async () => {
    const cache = new TurnHistoryCache(500);
    const { asked, read } = reader();
    const rows = await cache.history('big', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(rows).toHaveLength(20);
    expect(cache.stats()).toEqual({ sessions: 0, chars: 0 });
    await cache.history('big', '0', [{ line_id: 'L', lo: 0, hi: 9 }], read);
    expect(asked).toHaveLength(2);
  });

  it('takes a floor its caller just committed, only under the revision it holds', async () => {
    const cache = new TurnHistoryCache(1_000_000);
    const { asked, read } = reader();
    await cache.history('s1', '4', [{ line_id: 'L', lo: 0, hi: 2 }], read);
    const floor3 = rowsOf({ line_id: 'L', lo: 3, hi: 3 });
    cache.addFloor('s1', '3', 'L', 3, floor3); // an older revision: ignored
    cache.addFloor('s9', '4', 'L', 3, floor3); // a session not held: ignored
    expect(cache.stats().sessions).toBe(1);
    cache.addFloor('s1', '4', 'L', 3, floor3);
    const rows = await cache.history('s1', '4', [{ line_id: 'L', lo: 0, hi: 3 }], read);
    expect(asked).toHaveLength(1);
    expect(rows.slice(-2)).toEqual(floor3);
  });
});
