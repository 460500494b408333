import { DomainError } from '@hearth/domain';
import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import {
  checkRequestInjections,
  historyEntries,
  readFloorStateSnapshot,
  turnModelFromConfig,
  turnSeed,
} from './turn-context';

const item = (overrides: Record<string, unknown> = {}) => ({
  source_kind: 'client_injection',
  title: 't',
  content: 'c',
  placement: 'after_history',
  ...overrides,
});

describe('turn context rules', () => {
  it('request injections become request-scope items with their order and params', () => {
    expect(
      checkRequestInjections([item({ order: 5, placement_params: { depth: 1 }, scope: 'request' })]),
    ).toEqual([
      {
        scope: 'request',
        source_kind: 'client_injection',
        title: 't',
        content: 'c',
        placement: 'after_history',
        placement_params: { depth: 1 },
        order: 5,
      },
    ]);
    expect(checkRequestInjections(null)).toEqual([]);
    expect(checkRequestInjections(Array.from({ length: 32 }, () => item()))).toHaveLength(32);
  });

  it('refuses 33 items and bad items with 400 invalid_injection_payload naming each field', () => {
    const refuse = (items: unknown) => {
      try {
        checkRequestInjections(items as never);
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('invalid_injection_payload');
        expect((error as DomainError).status).toBe(400);
        return ((error as DomainError).details as { fields: Array<{ field: string }> }).fields.map(
          (f) => f.field,
        );
      }
      throw new Error('accepted');
    };
    expect(refuse(Array.from({ length: 33 }, () => item()))).toEqual(['prompt_runtime_injections']);
    expect(refuse('nope')).toEqual(['prompt_runtime_injections']);
    expect(refuse([item({ source_kind: 'debug_injection', scope: 'branch', extra: 1 }), 'x'])).toEqual([
      'prompt_runtime_injections[0].extra',
      'prompt_runtime_injections[0].source_kind',
      'prompt_runtime_injections[0].scope',
      'prompt_runtime_injections[1]',
    ]);
  });

  it('the seed depends on every id and is hex', () => {
    const a = turnSeed('s', 'b', 'f', null);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(turnSeed('s', 'b', 'f', null)).toBe(a);
    for (const other of [
      turnSeed('s2', 'b', 'f', null),
      turnSeed('s', 'b2', 'f', null),
      turnSeed('s', 'b', null, null),
      turnSeed('s', 'b', 'f', 'p'),
    ])
      expect(other).not.toBe(a);
  });

  it('reads only well-formed floor state snapshots', () => {
    expect(readFloorStateSnapshot(null)).toEqual({});
    const floor = (state_snapshot: unknown) => ({ state_snapshot }) as never;
    expect(
      readFloorStateSnapshot(
        floor({ timed_state: { sticky: {}, cooldown: {} }, variables: { local: {}, global: {} } }),
      ),
    ).toEqual({
      timed_state: { sticky: {}, cooldown: {} },
      variables: { local: {}, global: {} },
    });
    expect(readFloorStateSnapshot(floor({ timed_state: { sticky: [] } }))).toEqual({
      timed_state: null,
      variables: null,
    });
  });

  it('the configured model needs both provider and model', () => {
    expect(turnModelFromConfig(null)).toBeNull();
    expect(
      turnModelFromConfig({ llm: { provider: 'openai', model: null, baseUrl: null, apiKey: null } }),
    ).toBeNull();
    expect(
      turnModelFromConfig({ llm: { provider: 'anthropic', model: 'claude', baseUrl: null, apiKey: null } }),
    ).toEqual({
      provider: 'anthropic',
      model_id: 'claude',
      base_url: null,
    });
  });

  describe('history entries', () => {
    type HistoryRow = Parameters<typeof historyEntries>[0][number];
    const row = (floor_no: number, role: HistoryRow['role'], content: string): HistoryRow => ({
      floor_no,
      message_id: `msg_${floor_no}_${role}`,
      role,
      content,
      is_hidden: false,
      token_count: 7,
      token_encoding: 'o200k_base',
    });
    const names = { user: 'Ann', char: 'Seraphina', encoding: 'o200k_base' };

    it('maps roles and names, drops tool messages and keeps counts of the same encoding only', () => {
      const rows = [
        row(0, 'assistant', 'hi'),
        row(1, 'user', 'hello'),
        row(1, 'tool', 'x'),
        row(2, 'system', 's'),
      ];
      expect(historyEntries(rows, names)).toEqual([
        expect.objectContaining({ floor_no: 0, role: 'assistant', name: 'Seraphina', token_count: 7 }),
        expect.objectContaining({ floor_no: 1, role: 'user', name: 'Ann', content: 'hello' }),
        expect.objectContaining({ floor_no: 2, role: 'system', name: 'System', is_narrator: true }),
      ]);
    });

    it("counts a message stored in another encoding once, in the model's encoding, when first read", () => {
      const text = 'The quick brown fox jumps over the lazy dog. '.repeat(5);
      const rows = [row(0, 'assistant', text)];
      const entries = historyEntries(rows, { ...names, encoding: 'cl100k_base' });
      const expected = tokenCounter('cl100k_base').count(text);
      expect(entries[0].token_count).toBe(expected);
      expect(entries[0].token_count).not.toBe(7);
      expect(Object.isFrozen(entries[0])).toBe(true);
      // The next turn's entry is the same object: its count is not made again.
      expect(historyEntries(rows, { ...names, encoding: 'cl100k_base' })[0]).toBe(entries[0]);
    });

    it('gives the same rows the same frozen entries, and new ones when the names change', () => {
      const rows = [row(0, 'assistant', 'hi'), row(1, 'user', 'hello')];
      const first = historyEntries(rows, names);
      const again = historyEntries(rows, names);
      expect(again[0]).toBe(first[0]);
      expect(again[1]).toBe(first[1]);
      expect(Object.isFrozen(first[1])).toBe(true);

      const renamed = historyEntries(rows, { ...names, user: 'Bea' });
      expect(renamed[1]).not.toBe(first[1]);
      expect(renamed[1].name).toBe('Bea');
      // A row read again from the database is a new object: a new entry with its own content.
      const reread = historyEntries([{ ...rows[1], content: 'edited' }], names);
      expect(reread[0].content).toBe('edited');
    });
  });
});
