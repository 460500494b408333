import { GroupCommit, type GroupCommitWriter } from './group-commit';

interface Item {
  key: string;
  id: number;
  /** `one` refuses this item; `many` refuses any batch holding it. */
  bad?: boolean;
}

/** A writer whose statements end when the test says so, recording what each one wrote. */
function controlledWriter() {
  const calls: { kind: 'one' | 'many'; ids: number[]; finish: () => void }[] = [];
  const statement = <T>(kind: 'one' | 'many', items: Item[], result: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      calls.push({
        kind,
        ids: items.map((i) => i.id),
        finish: () => {
          try {
            resolve(result());
          } catch (error) {
            reject(error);
          }
        },
      });
    });
  const writer: GroupCommitWriter<Item, string> = {
    key: (item) => item.key,
    one: (item) =>
      statement('one', [item], () => {
        if (item.bad) throw new Error(`bad ${item.id}`);
        return `one:${item.id}`;
      }),
    many: (items) =>
      statement('many', [...items], () => {
        if (items.some((i) => i.bad)) throw new Error('batch failed');
        return items.map((i) => `many:${i.id}`);
      }),
  };
  return { writer, calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const options = { maxBatch: 64, stallMs: 10_000, maxInFlight: 4 };

describe('GroupCommit', () => {
  it('writes a lone item at once with the single statement', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, options);
    const result = group.submit({ key: 'a', id: 1 });
    expect(calls.map((c) => [c.kind, c.ids])).toEqual([['one', [1]]]);
    calls[0].finish();
    await expect(result).resolves.toBe('one:1');
    expect(group.stats).toMatchObject({ singles: 1, batches: 0 });
  });

  it('writes what arrived during a statement in one batch, in arrival order, each its own result', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, options);
    const first = group.submit({ key: 'a', id: 1 });
    const rest = [2, 3, 4].map((id) => group.submit({ key: `k${id}`, id }));
    expect(group.queued).toBe(3);
    calls[0].finish();
    await first;
    await tick();
    expect(calls.map((c) => [c.kind, c.ids])).toEqual([
      ['one', [1]],
      ['many', [2, 3, 4]],
    ]);
    calls[1].finish();
    await expect(Promise.all(rest)).resolves.toEqual(['many:2', 'many:3', 'many:4']);
    expect(group.stats).toMatchObject({ singles: 1, batches: 1, batchedItems: 3, largestBatch: 3 });
  });

  it('puts at most one item of a key in a batch; the others follow in arrival order', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, options);
    const all = [group.submit({ key: 'x', id: 0 })];
    for (const [key, id] of [
      ['a', 1],
      ['a', 2],
      ['b', 3],
      ['a', 4],
      ['c', 5],
    ] as const)
      all.push(group.submit({ key, id }));
    for (let i = 0; i < 3; i++) {
      calls[i].finish();
      await tick();
    }
    calls[3]?.finish();
    await Promise.all(all);
    expect(calls.map((c) => c.ids)).toEqual([[0], [1, 3, 5], [2], [4]]);
  });

  it('respects maxBatch', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, { ...options, maxBatch: 2 });
    const all = [0, 1, 2, 3, 4].map((id) => group.submit({ key: `k${id}`, id }));
    for (let i = 0; i < 3; i++) {
      calls[i].finish();
      await tick();
    }
    await Promise.all(all);
    expect(calls.map((c) => c.ids)).toEqual([[0], [1, 2], [3, 4]]);
  });

  it('writes the items of a failed batch one by one: only the bad one fails', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, options);
    const first = group.submit({ key: 'x', id: 0 });
    const items = [1, 2, 3].map((id) => group.submit({ key: `k${id}`, id, bad: id === 2 }));
    calls[0].finish();
    await first;
    await tick();
    calls[1].finish(); // the batch statement fails as a whole
    await tick();
    expect(calls.slice(2).map((c) => [c.kind, c.ids])).toEqual([
      ['one', [1]],
      ['one', [2]],
      ['one', [3]],
    ]);
    for (const call of calls.slice(2)) call.finish();
    const settled = await Promise.allSettled(items);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason)))).toEqual([
      'one:1',
      'Error: bad 2',
      'one:3',
    ]);
    expect(group.stats.fallbacks).toBe(1);
  });

  it('lets the next batch start when one is held up, never with a key of the held-up one', async () => {
    const { writer, calls } = controlledWriter();
    const group = new GroupCommit(writer, { ...options, stallMs: 20 });
    const stalled = group.submit({ key: 'a', id: 1 });
    const later = [
      group.submit({ key: 'a', id: 2 }),
      group.submit({ key: 'b', id: 3 }),
      group.submit({ key: 'c', id: 4 }),
    ];
    await new Promise((resolve) => setTimeout(resolve, 60));
    // b and c went ahead; a's second item waits for its first.
    expect(calls.map((c) => c.ids)).toEqual([[1], [3, 4]]);
    calls[1].finish();
    await Promise.all(later.slice(1));
    expect(group.queued).toBe(1);
    calls[0].finish();
    await stalled;
    await tick();
    expect(calls.map((c) => c.ids)).toEqual([[1], [3, 4], [2]]);
    calls[2].finish();
    await expect(later[0]).resolves.toBe('one:2');
  });

  describe('with a pipelined writer (pipelineMinBatch)', () => {
    const pipelined = { ...options, pipelineMinBatch: 3 };
    const submitAll = (group: GroupCommit<Item, string>, ids: number[]) =>
      ids.map((id) => group.submit({ key: `k${id}`, id }));

    it('sends a batch behind the one in flight once pipelineMinBatch items wait, not before', async () => {
      const { writer, calls } = controlledWriter();
      const group = new GroupCommit(writer, pipelined);
      const all = submitAll(group, [0, 1, 2]);
      // 0 alone, then 1 and 2 wait: fewer than 3.
      expect(calls.map((c) => c.ids)).toEqual([[0]]);
      all.push(...submitAll(group, [3]));
      expect(calls.map((c) => c.ids)).toEqual([[0], [1, 2, 3]]);
      // Two in flight: the next items wait, whatever their number.
      all.push(...submitAll(group, [4, 5, 6, 7]));
      expect(calls).toHaveLength(2);
      expect(group.queued).toBe(4);
      calls[0].finish();
      await tick();
      // One in flight (3 items) and 4 waiting: they go behind it.
      expect(calls.map((c) => c.ids)).toEqual([[0], [1, 2, 3], [4, 5, 6, 7]]);
      calls[1].finish();
      calls[2].finish();
      await expect(Promise.all(all)).resolves.toEqual([
        'one:0',
        'many:1',
        'many:2',
        'many:3',
        'many:4',
        'many:5',
        'many:6',
        'many:7',
      ]);
    });

    it('waits for as many items as the batch in flight carries', async () => {
      const { writer, calls } = controlledWriter();
      const group = new GroupCommit(writer, pipelined);
      const all = submitAll(group, [0, 1, 2, 3, 4]);
      expect(calls.map((c) => c.ids)).toEqual([[0], [1, 2, 3]]);
      calls[0].finish();
      await tick();
      // [1, 2, 3] in flight; 4 waits, then 5 and 6: 3 items, enough.
      all.push(...submitAll(group, [5]));
      expect(calls).toHaveLength(2);
      all.push(...submitAll(group, [6]));
      expect(calls.map((c) => c.ids)).toEqual([[0], [1, 2, 3], [4, 5, 6]]);
      calls[1].finish();
      await tick();
      // Behind [4, 5, 6] (3 items), 3 more are needed again.
      all.push(...submitAll(group, [7, 8]));
      expect(calls).toHaveLength(3);
      calls[2].finish();
      await tick();
      expect(calls.map((c) => c.ids).slice(3)).toEqual([[7, 8]]);
      calls[3].finish();
      await Promise.all(all);
    });

    it('never sends a key behind a statement that writes it', async () => {
      const { writer, calls } = controlledWriter();
      const group = new GroupCommit(writer, pipelined);
      const all = [group.submit({ key: 'a', id: 0 })];
      for (const [key, id] of [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ] as const)
        all.push(group.submit({ key, id }));
      // Three wait, but a is in flight: only b and c go behind it.
      expect(calls.map((c) => c.ids)).toEqual([[0], [2, 3]]);
      calls[0].finish();
      await tick();
      // a is free now, but one item is not enough to go behind [2, 3]: it waits for its end.
      expect(calls.map((c) => c.ids)).toEqual([[0], [2, 3]]);
      calls[1].finish();
      await tick();
      expect(calls.map((c) => [c.kind, c.ids])).toEqual([
        ['one', [0]],
        ['many', [2, 3]],
        ['one', [1]],
      ]);
      calls[2].finish();
      await expect(Promise.all(all)).resolves.toEqual(['one:0', 'one:1', 'many:2', 'many:3']);
    });
  });
});
