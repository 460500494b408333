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

  it('numbers fit their columns: integer columns up to 2,147,483,647 with their minimum, times 0..2^53-1', () => {
    const card = {
      _original_id: 'u1',
      name: 'n',
      status: 'active',
      snapshot: { name: 'n' },
      revision: 1,
      created_at: 1,
      updated_at: 1,
    };
    const withCard = (changes: Record<string, unknown>) =>
      emptyDocument({ user_cards: [{ ...card, ...changes }] });
    expect(parseBackupDocument(withCard({ revision: 2_147_483_647 })).document.data.user_cards).toHaveLength(
      1,
    );
    expect(
      parseBackupDocument(withCard({ created_at: 0, updated_at: Number.MAX_SAFE_INTEGER })).document.data
        .user_cards,
    ).toHaveLength(1);
    for (const [changes, path] of [
      [{ revision: 0 }, '$.data.user_cards[0].revision'],
      [{ revision: 2_147_483_648 }, '$.data.user_cards[0].revision'],
      [{ created_at: -1 }, '$.data.user_cards[0].created_at'],
      [{ updated_at: 1e20 }, '$.data.user_cards[0].updated_at'],
      [{ created_at: 1.5 }, '$.data.user_cards[0].created_at'],
    ] as const) {
      expect(errorOf(() => parseBackupDocument(withCard(changes)))).toMatchObject({
        code: 'import_parse_error',
        status: 400,
        details: { path },
      });
    }
    const version = {
      _original_id: 'v1',
      version_no: 1,
      name: 'p',
      payload: {},
      file: null,
      source_format: null,
      change_kind: 'import',
      created_by_operation_id_ref: null,
      created_at: 1,
    };
    const preset = (head: Record<string, unknown>, v: Record<string, unknown> = {}) =>
      emptyDocument({
        presets: [
          {
            _original_id: 'p1',
            name: 'p',
            source: 'ext_frontend',
            created_at: 1,
            updated_at: 1,
            latest_version_id_ref: 'v1',
            version_no: 1,
            versions: [{ ...version, ...v }],
            ...head,
          },
        ],
      });
    expect(parseBackupDocument(preset({}, { version_no: 2_147_483_647 })).document.data.presets).toHaveLength(
      1,
    );
    for (const [doc, path] of [
      [preset({ version_no: 0 }), '$.data.presets[0].version_no'],
      [preset({}, { version_no: 2_147_483_648 }), '$.data.presets[0].versions[0].version_no'],
      [preset({}, { version_no: 0 }), '$.data.presets[0].versions[0].version_no'],
      [preset({}, { created_at: 2 ** 63 }), '$.data.presets[0].versions[0].created_at'],
    ] as const) {
      expect(errorOf(() => parseBackupDocument(doc))).toMatchObject({
        code: 'import_parse_error',
        details: { path },
      });
    }
  });

  it('refuses NUL and unpaired surrogates anywhere (values and keys); a surrogate pair is fine', () => {
    const card = (snapshot: Record<string, unknown>) =>
      emptyDocument({
        user_cards: [
          {
            _original_id: 'u1',
            name: 'n',
            status: 'active',
            snapshot: { name: 'n', ...snapshot },
            revision: 1,
            created_at: 1,
            updated_at: 1,
          },
        ],
      });
    expect(parseBackupDocument(card({ note: 'é😀' })).document.data.user_cards).toHaveLength(1);
    for (const [snapshot, path] of [
      [{ note: 'a\u0000' }, '$.data.user_cards[0].snapshot.note'],
      [{ note: 'a\ud800' }, '$.data.user_cards[0].snapshot.note'],
      [{ list: ['ok', '\udc00b'] }, '$.data.user_cards[0].snapshot.list[1]'],
      [{ ['k\udbff']: 1 }, '$.data.user_cards[0].snapshot'],
    ] as const) {
      expect(errorOf(() => parseBackupDocument(card(snapshot)))).toMatchObject({
        code: 'import_parse_error',
        details: { path },
      });
    }
  });
});
