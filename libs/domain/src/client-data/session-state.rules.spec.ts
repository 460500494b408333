import { DomainError } from '../errors';
import {
  checkAccountLimits,
  checkNamespaceLimits,
  checkStateReplay,
  CLIENT_DATA_LIMITS,
  prepareSessionStateWrites,
  usageAfterWrites,
} from './session-state.rules';

const codeOf = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof DomainError ? error.code : `not a DomainError: ${String(error)}`;
  }
};

describe('session state rules', () => {
  describe('prepareSessionStateWrites', () => {
    it('serialises values with their UTF-8 size, deletes as absent', () => {
      expect(
        prepareSessionStateWrites([
          { namespace: 'inv', slot: 'gold', value: { n: 'é' } },
          { namespace: 'inv', slot: 'old', delete: true },
          { namespace: 'inv', slot: 'nil', value: null },
        ]),
      ).toEqual([
        { namespace: 'inv', slot: 'gold', present: true, json: '{"n":"é"}', bytes: 10 },
        { namespace: 'inv', slot: 'old', present: false, json: null, bytes: 0 },
        { namespace: 'inv', slot: 'nil', present: true, json: 'null', bytes: 4 },
      ]);
    });

    it('refuses the public namespace before anything else', () => {
      expect(
        codeOf(() => prepareSessionStateWrites([{ namespace: 'game_state', slot: 'x', delete: true }])),
      ).toBe('session_state_public_write_forbidden');
    });

    it('takes 256 KiB of values together and refuses one byte more', () => {
      const text = (bytes: number) => 'x'.repeat(bytes - 2);
      const limit = CLIENT_DATA_LIMITS.requestMaxBytes;
      expect(
        codeOf(() => prepareSessionStateWrites([{ namespace: 'a', slot: 's', value: text(limit) }])),
      ).toBeNull();
      expect(
        codeOf(() =>
          prepareSessionStateWrites([
            { namespace: 'a', slot: 's', value: text(limit / 2) },
            { namespace: 'a', slot: 't', value: text(limit / 2 + 1) },
          ]),
        ),
      ).toBe('session_state_payload_too_large');
    });

    it('refuses what Postgres cannot store and nesting past 128 levels', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 128; i++) deep = [deep];
      expect(
        codeOf(() => prepareSessionStateWrites([{ namespace: 'a', slot: 's', value: deep }])),
      ).toBeNull();
      expect(codeOf(() => prepareSessionStateWrites([{ namespace: 'a', slot: 's', value: [deep] }]))).toBe(
        'validation_error',
      );
      for (const value of ['\u0000', { ['k\ud800']: 1 }, ['\udc00x']])
        expect(codeOf(() => prepareSessionStateWrites([{ namespace: 'a', slot: 's', value }]))).toBe(
          'validation_error',
        );
      expect(codeOf(() => prepareSessionStateWrites([{ namespace: 'a', slot: '\ud800', value: 1 }]))).toBe(
        'validation_error',
      );
    });
  });

  describe('namespace limits', () => {
    const current = [
      { namespace: 'a', slot: 'x', present: true, value_bytes: 4 },
      { namespace: 'a', slot: 'gone', present: false, value_bytes: 0 },
      { namespace: 'b', slot: 'y', present: true, value_bytes: 7 },
    ];

    it('counts present slots and bytes before and after the writes, per written namespace', () => {
      const writes = prepareSessionStateWrites([
        { namespace: 'a', slot: 'x', value: 12 },
        { namespace: 'a', slot: 'z', value: 'abc' },
        { namespace: 'a', slot: 'z', delete: true },
        { namespace: 'c', slot: 'w', value: true },
      ]);
      expect(Object.fromEntries(usageAfterWrites(current, writes))).toEqual({
        a: { before: { items: 1, bytes: 4 }, after: { items: 1, bytes: 2 } },
        c: { before: { items: 0, bytes: 0 }, after: { items: 1, bytes: 4 } },
      });
    });

    it('refuses growth past a limit, never a write that makes the state smaller', () => {
      const limits = new Map([['a', { name: 'a', max_items: 1, max_bytes: 4 }]]);
      const check = (writes: Parameters<typeof prepareSessionStateWrites>[0]) =>
        codeOf(() =>
          checkNamespaceLimits(usageAfterWrites(current, prepareSessionStateWrites(writes)), limits),
        );
      expect(check([{ namespace: 'a', slot: 'x', value: 1234 }])).toBeNull();
      expect(check([{ namespace: 'a', slot: 'y', value: 1 }])).toBe(
        'session_state_namespace_item_limit_exceeded',
      );
      expect(check([{ namespace: 'a', slot: 'x', value: 12345 }])).toBe(
        'session_state_namespace_byte_limit_exceeded',
      );
      const lowered = new Map([['a', { name: 'a', max_items: 1, max_bytes: 1 }]]);
      expect(
        codeOf(() =>
          checkNamespaceLimits(
            usageAfterWrites(current, prepareSessionStateWrites([{ namespace: 'a', slot: 'x', value: 12 }])),
            lowered,
          ),
        ),
      ).toBeNull();
    });
  });

  it('account limits count stored values and their bytes, at the limit and past it; deletes pass', () => {
    const writes = prepareSessionStateWrites([
      { namespace: 'a', slot: 's', value: 1 },
      { namespace: 'a', slot: 't', delete: true },
    ]);
    const limits = { maxItems: 5, maxBytes: 10 };
    expect(codeOf(() => checkAccountLimits({ items: 3, bytes: 9 }, writes, limits))).toBeNull();
    expect(codeOf(() => checkAccountLimits({ items: 4, bytes: 0 }, writes, limits))).toBeNull();
    expect(codeOf(() => checkAccountLimits({ items: 5, bytes: 0 }, writes, limits))).toBe(
      'session_state_account_item_limit_exceeded',
    );
    expect(codeOf(() => checkAccountLimits({ items: 0, bytes: 10 }, writes, limits))).toBe(
      'session_state_account_byte_limit_exceeded',
    );
    // Only deletes: nothing is stored, so nothing is refused, even far past the limits.
    expect(codeOf(() => checkAccountLimits({ items: 9, bytes: 99 }, [writes[1]], limits))).toBeNull();
  });

  it('replay: block refuses, confirm needs every id, replay passes', () => {
    const landed = [
      { id: 'ssm_1', namespace: 'a', slot: 's', replay_policy: 'replay' as const },
      { id: 'ssm_2', namespace: 'b', slot: 's', replay_policy: 'confirm' as const },
      { id: 'ssm_3', namespace: 'b', slot: 't', replay_policy: 'confirm' as const },
    ];
    expect(codeOf(() => checkStateReplay('flr', landed, []))).toBe(
      'session_state_replay_confirmation_required',
    );
    expect(codeOf(() => checkStateReplay('flr', landed, ['ssm_2']))).toBe(
      'session_state_replay_confirmation_required',
    );
    expect(codeOf(() => checkStateReplay('flr', landed, ['ssm_2', 'ssm_3']))).toBeNull();
    expect(
      codeOf(() =>
        checkStateReplay(
          'flr',
          [...landed, { id: 'ssm_4', namespace: 'c', slot: 's', replay_policy: 'block' }],
          ['ssm_2', 'ssm_3', 'ssm_4'],
        ),
      ),
    ).toBe('session_state_replay_blocked');
  });
});
