import { DomainError } from '../errors';
import { parseBackupDocument, RESTORED_NAME_MAX, restoredName, restoredNameCandidates } from './backup.rules';

const emptyDocument = (extra: Record<string, unknown> = {}) => ({
  spec: 'hearth_backup',
  spec_version: '1.0.0',
  data: {
    characters: [],
    presets: [],
    regex_profiles: [],
    worldbooks: [],
    user_cards: [],
    sessions: [],
    vc_tags: [],
    operation_logs: [],
    ...extra,
  },
});

const errorOf = (fn: () => unknown): DomainError => {
  try {
    fn();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('no error');
};

describe('backup rules', () => {
  it('restoredName appends " (restored)" until the name is free', () => {
    const taken = new Set(['a', 'a (restored)']);
    expect(restoredName('b', (n) => taken.has(n))).toBe('b');
    expect(restoredName('a', (n) => taken.has(n))).toBe('a (restored) (restored)');
  });

  it('restoredNameCandidates cut the original so every candidate stays within 200 characters', () => {
    const long = 'x'.repeat(RESTORED_NAME_MAX);
    const candidates = restoredNameCandidates(long);
    expect(candidates[0]).toBe(long);
    expect(candidates[1]).toBe(`${'x'.repeat(RESTORED_NAME_MAX - 11)} (restored)`);
    for (const c of candidates) expect([...c].length).toBeLessThanOrEqual(RESTORED_NAME_MAX);
    expect(() => restoredName(long, () => true)).toThrow(DomainError);
  });

  it('parses an empty document with defaults for the options', () => {
    const parsed = parseBackupDocument(emptyDocument());
    expect(parsed.document.options).toEqual({ include_operation_logs: 'none', include_vc_tags: true });
    expect(parsed.chats).toEqual([]);
  });

  it('refuses another spec, an unsupported major version and repeated ids', () => {
    expect(errorOf(() => parseBackupDocument({ ...emptyDocument(), spec: 'native_chat' }))).toMatchObject({
      code: 'import_parse_error',
      details: { path: '$.spec' },
    });
    expect(errorOf(() => parseBackupDocument({ ...emptyDocument(), spec_version: '2.0.0' })).code).toBe(
      'import_unsupported_version',
    );
    const card = {
      _original_id: 'u1',
      name: 'n',
      status: 'active',
      snapshot: { name: 'n' },
      revision: 1,
      created_at: 1,
      updated_at: 1,
    };
    expect(
      errorOf(() =>
        parseBackupDocument(
          emptyDocument({ user_cards: [card, { ...card, name: 'm', snapshot: { name: 'm' } }] }),
        ),
      ),
    ).toMatchObject({ code: 'import_parse_error', details: { path: '$.data.user_cards[1]._original_id' } });
    expect(
      errorOf(() =>
        parseBackupDocument(emptyDocument({ user_cards: [{ ...card, snapshot: { name: 'other' } }] })),
      ),
    ).toMatchObject({ details: { path: '$.data.user_cards[0].snapshot.name' } });
  });
});
