import { book, msgs, run, stEntry, uids } from './lorebook.test-support';
import { readLorebookEntry } from './entry';
import type { LorebookTimedState } from './timed-effects';

/** §d.9 / §j: timed effects count messages (chat length), state in and out. */
describe('lorebook timed effects (external-formats.md §d.9, §j)', () => {
  const turn = (
    entries: object,
    text: string,
    chatLength: number,
    timedState?: LorebookTimedState,
    extra: object = {},
  ) =>
    run({
      books: [book('b', [stEntry(1, { key: ['dragon'], ...entries })])],
      messages: msgs(text),
      chatLength,
      timedState,
      ...extra,
    });

  it('§d.9 sticky N keeps the entry active until the chat length reaches start + N', () => {
    const t1 = turn({ sticky: 3 }, 'a dragon', 2);
    expect(uids(t1)).toEqual([1]);
    expect(t1.timedState.sticky).toEqual({
      'b.1': { hash: expect.any(String), start: 2, end: 5, protected: false },
    });
    const t2 = turn({ sticky: 3 }, 'nothing', 4, t1.timedState);
    expect(t2.activated.map((a) => a.mode)).toEqual(['sticky']);
    expect(t2.timedState.sticky['b.1']).toEqual(t1.timedState.sticky['b.1']);
    const t3 = turn({ sticky: 3 }, 'nothing', 5, t2.timedState);
    expect(uids(t3)).toEqual([]);
    expect(t3.timedState.sticky).toEqual({});
  });

  it('§j sticky 2 + cooldown 2 have run out by the next turn, and the cooldown starts at once', () => {
    const fields = { sticky: 2, cooldown: 2 };
    const t1 = turn(fields, 'a dragon', 2);
    expect(Object.keys(t1.timedState.sticky)).toEqual(['b.1']);
    expect(Object.keys(t1.timedState.cooldown)).toEqual(['b.1']);
    // Next turn (two more messages): sticky ended → a protected cooldown starts now; the key alone cannot fire it.
    const t2 = turn(fields, 'a dragon', 4, t1.timedState);
    expect(uids(t2)).toEqual([]);
    expect(t2.timedState.sticky).toEqual({});
    expect(t2.timedState.cooldown['b.1']).toMatchObject({ start: 4, end: 6, protected: true });
    const t3 = turn(fields, 'a dragon', 6, t2.timedState);
    expect(uids(t3)).toEqual([1]);
  });

  it('§d.9 cooldown N blocks re-activation until start + N', () => {
    const t1 = turn({ cooldown: 3 }, 'a dragon', 2);
    expect(t1.timedState.cooldown['b.1']).toMatchObject({ start: 2, end: 5, protected: false });
    expect(uids(turn({ cooldown: 3 }, 'a dragon', 4, t1.timedState))).toEqual([]);
    expect(uids(turn({ cooldown: 3 }, 'a dragon', 5, t1.timedState))).toEqual([1]);
  });

  it('§d.9 delay N: the entry cannot activate while the chat has fewer than N messages', () => {
    expect(uids(turn({ delay: 3 }, 'a dragon', 2))).toEqual([]);
    expect(uids(turn({ delay: 3 }, 'a dragon', 3))).toEqual([1]);
  });

  it('§d.9 a record is dropped when the chat did not advance past its start (regenerate)', () => {
    const t1 = turn({ sticky: 3 }, 'a dragon', 2);
    const again = turn({ sticky: 3 }, 'nothing', 2, t1.timedState);
    expect(uids(again)).toEqual([]);
    expect(again.timedState.sticky).toEqual({});
  });

  it('§d.9 dry runs neither read nor write sticky/cooldown', () => {
    const t1 = turn({ sticky: 3 }, 'a dragon', 2);
    const dry = turn({ sticky: 3 }, 'nothing', 4, t1.timedState, { dryRun: true });
    expect(uids(dry)).toEqual([]);
    expect(dry.timedState).toEqual(t1.timedState);
    const dryFirst = turn({ sticky: 3 }, 'a dragon', 2, undefined, { dryRun: true });
    expect(uids(dryFirst)).toEqual([1]);
    expect(dryFirst.timedState).toEqual({ sticky: {}, cooldown: {} });
  });

  it('§d.9 an edited entry does not inherit the old record; the record expires once its end passed', () => {
    const t1 = turn({ sticky: 3 }, 'a dragon', 2);
    const edited = turn({ sticky: 3, content: 'changed' }, 'nothing', 4, t1.timedState);
    expect(uids(edited)).toEqual([]);
    expect(Object.keys(edited.timedState.sticky)).toEqual(['b.1']);
    expect(turn({ sticky: 3, content: 'changed' }, 'nothing', 5, t1.timedState).timedState.sticky).toEqual(
      {},
    );
  });

  it('§d.9 a record whose entry no longer has the effect is dropped', () => {
    const t1 = turn({ sticky: 3 }, 'a dragon', 2);
    const raw = run({
      books: [book('b', [stEntry(1, { key: ['dragon'], sticky: 0 })])],
      messages: msgs('nothing'),
      chatLength: 4,
      // same hash as a sticky entry is impossible once the field changed, so point the record at this entry
      timedState: { sticky: { 'b.1': { ...t1.timedState.sticky['b.1'], hash: 'x' } }, cooldown: {} },
    });
    expect(uids(raw)).toEqual([]);
  });

  it('§d.5.2 a sticky member keeps its inclusion group: the other members are dropped', () => {
    const entries = [
      stEntry(1, { key: ['a'], group: 'g', sticky: 5 }),
      stEntry(2, { key: ['b'], group: 'g', groupOverride: true }),
    ];
    const t1 = run({ books: [book('b', entries)], messages: msgs('a'), chatLength: 2 });
    expect(uids(t1)).toEqual([1]);
    const t2 = run({
      books: [book('b', entries)],
      messages: msgs('b'),
      chatLength: 4,
      timedState: t1.timedState,
    });
    expect(uids(t2)).toEqual([1]);
  });

  it('§d.5.3 sticky entries come first and skip the probability roll', () => {
    const b = book('b', [
      stEntry(1, { key: ['x'], order: 900 }),
      stEntry(2, { key: ['y'], sticky: 5, probability: 0, useProbability: true }),
    ]);
    const hash = readLorebookEntry(b.entries[1], b).hash;
    const timedState = { sticky: { 'b.2': { hash, start: 2, end: 7, protected: false } }, cooldown: {} };
    const t2 = run({ books: [b], messages: msgs('x'), chatLength: 4, timedState });
    expect(t2.activated.map((a) => [a.uid, a.mode])).toEqual([
      [2, 'sticky'],
      [1, 'key'],
    ]);
    // Not sticky: probability 0 never passes.
    expect(uids(run({ books: [b], messages: msgs('x y'), chatLength: 4 }))).toEqual([1]);
  });

  it('malformed timed state is dropped with a warning, never a throw', () => {
    const r = run({
      books: [book('b', [stEntry(1, { key: ['x'] })])],
      messages: msgs('x'),
      timedState: { sticky: { bad: 'nope' }, cooldown: 5 } as never,
    });
    expect(uids(r)).toEqual([1]);
    expect(r.warnings.map((w) => w.code)).toEqual(['invalid_timed_state']);
  });
});
