import {
  expectFieldEquivalent,
  expectParseError,
  fixtureFiles,
  readJsonFixture,
} from './format.test-support';
import {
  checkWorldbookImportEntries,
  checkWorldbookStoredUids,
  characterBookEntryToSt,
  characterBookToWorldbook,
  exportWorldbook,
  NormalizedWorldbookEntry,
  parseWorldbook,
  WORLDBOOK_IMPORT_MAX_ENTRIES,
  WORLDBOOK_UID_MAX,
  worldbookEntryToSt,
} from './worldbook';

const FILES = fixtureFiles('worldbooks');
const withoutRaw = ({ raw: _raw, ...fields }: NormalizedWorldbookEntry) => fields;

describe('worldbook', () => {
  it('has the two world file fixtures', () => {
    expect(FILES).toHaveLength(2);
  });

  it.each(FILES)('%s round-trips to an equivalent file, entry by entry and field by field', (file) => {
    const original = readJsonFixture('worldbooks', file);
    const parsed = parseWorldbook(original);
    expect(parsed.entries.map((e) => e.uid)).toEqual(Object.keys(original.entries as object).map(Number));
    const exported = exportWorldbook(parsed);
    expectFieldEquivalent(exported, original);
    expectFieldEquivalent(exportWorldbook(parseWorldbook(exported)), original);
  });

  it('normalises an old (1.12.6) entry with spec 3 names and defaults', () => {
    const parsed = parseWorldbook(readJsonFixture('worldbooks', 'Eldoria.st-1.12.6.json'));
    const entry = parsed.entries[0];
    expect(withoutRaw(entry)).toEqual({
      uid: 0,
      keys: ['eldoria', 'wood', 'forest', 'magical forest'],
      keys_secondary: [],
      content: expect.stringContaining('{{user}}: "What is Eldoria?"'),
      comment: '',
      selective: false,
      selective_logic: 0,
      constant: false,
      position: 0,
      order: 100,
      depth: 4,
      role: 0,
      disable: false,
      scan_depth: null,
      case_sensitive: null,
      match_whole_words: null,
      exclude_recursion: false,
      prevent_recursion: false,
      delay_until_recursion: null,
      outlet_name: '',
    });
    expect(parsed.name).toBeNull();
  });

  it('maps role null to 0 and delayUntilRecursion booleans and numbers', () => {
    const parsed = parseWorldbook({
      entries: {
        '1': { uid: 1, key: ['a'], role: null, delayUntilRecursion: true },
        '2': {
          uid: 2,
          key: ['b'],
          role: 2,
          delayUntilRecursion: 3,
          position: 7,
          outletName: 'notes',
          scanDepth: 5,
          caseSensitive: true,
        },
        '3': { uid: 3, key: 'x, y', delayUntilRecursion: 0 },
      },
    });
    expect(parsed.entries.map((e) => [e.role, e.delay_until_recursion])).toEqual([
      [0, 1],
      [2, 3],
      [0, null],
    ]);
    expect(parsed.entries[1]).toMatchObject({
      position: 7,
      outlet_name: 'notes',
      scan_depth: 5,
      case_sensitive: true,
    });
    expect(parsed.entries[2].keys).toEqual(['x', 'y']);
  });

  it('writes normalised edits back under ST names, and the raw view shows them', () => {
    const parsed = parseWorldbook(readJsonFixture('worldbooks', 'Eldoria.st-1.18.0.json'));
    const entry = {
      ...parsed.entries[1],
      keys: ['new'],
      keys_secondary: ['second'],
      selective_logic: 3,
      role: 2,
      position: 4,
      delay_until_recursion: null,
      outlet_name: 'out',
      case_sensitive: false,
    };
    const st = worldbookEntryToSt(entry);
    expect(st).toMatchObject({
      uid: entry.uid,
      key: ['new'],
      keysecondary: ['second'],
      selectiveLogic: 3,
      role: 2,
      position: 4,
      outletName: 'out',
      caseSensitive: false,
    });
    expect(st.delayUntilRecursion).toBe(false); // unchanged meaning: raw value kept
    expect(st.probability).toBe(parsed.entries[1].raw.probability); // unmodelled fields kept
    const again = parseWorldbook({ entries: { [entry.uid]: st } }).entries[0];
    expect(withoutRaw(again)).toEqual(withoutRaw(entry));
    expect(worldbookEntryToSt({ ...parsed.entries[0], delay_until_recursion: 2 }).delayUntilRecursion).toBe(
      2,
    );
  });

  it('accepts entries as an array and assigns free uids where missing', () => {
    const parsed = parseWorldbook({
      name: 'Arr',
      entries: [{ key: ['a'] }, { uid: 0, key: ['b'] }, { key: ['c'], content: 'C' }],
    });
    expect(parsed.entries.map((e) => [e.uid, e.keys[0]])).toEqual([
      [1, 'a'],
      [0, 'b'],
      [2, 'c'],
    ]);
    expect(parsed.name).toBe('Arr');
    const out = exportWorldbook(parsed, 'Renamed');
    expect(out.name).toBe('Renamed');
    expect(Object.keys(out.entries as object)).toEqual(['0', '1', '2']);
    expect((out.entries as Record<string, Record<string, unknown>>)['2']).toEqual({
      key: ['c'],
      content: 'C',
      uid: 2,
    });
  });

  it('accepts card-embedded entries (keys, insertion_order, enabled) in an import', () => {
    const parsed = parseWorldbook({
      entries: [
        {
          id: 7,
          keys: ['k'],
          secondary_keys: ['s'],
          content: 'c',
          insertion_order: 5,
          enabled: false,
          position: 'before_char',
          extensions: {},
        },
      ],
    });
    expect(parsed.entries[0]).toMatchObject({
      uid: 7,
      keys: ['k'],
      keys_secondary: ['s'],
      order: 5,
      disable: true,
      position: 0,
    });
  });

  it('converts a card character_book into the same entries as the ST world file it came from', () => {
    const card = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
    const book = (card.data as Record<string, unknown>).character_book as Record<string, unknown>;
    const fromCard = characterBookToWorldbook(book);
    const fromFile = parseWorldbook(readJsonFixture('worldbooks', 'Eldoria.st-1.18.0.json'));
    expect(fromCard.entries.map(withoutRaw)).toEqual(fromFile.entries.map(withoutRaw));
    expect(fromCard.name).toBe(book.name);
    expect(fromCard.extra.originalData).toEqual(book);
    const st = worldbookEntryToSt(fromCard.entries[0]);
    expect(st).toMatchObject({
      key: ['eldoria', 'wood', 'forest', 'magical forest'],
      order: 100,
      disable: false,
      probability: 100,
      useProbability: true,
      groupWeight: 100,
    });
    expect(st.extensions).toEqual((book.entries as Array<Record<string, unknown>>)[0].extensions);
  });

  it('uses card entry defaults when extensions are missing', () => {
    const st = characterBookEntryToSt(
      { keys: ['a'], content: 'x', position: 'after_char', case_sensitive: true },
      3,
    );
    expect(st).toMatchObject({
      uid: 3,
      position: 1,
      probability: 100,
      useProbability: true,
      depth: 4,
      selectiveLogic: 0,
      groupWeight: 100,
      role: 0,
      caseSensitive: true,
      excludeRecursion: false,
      outletName: '',
      triggers: [],
      sticky: null,
      extensions: {},
    });
    expect(st).not.toHaveProperty('displayIndex');
  });

  it('keeps macros literal', () => {
    const parsed = parseWorldbook({
      entries: { '0': { uid: 0, key: ['{{char}}'], content: 'Hi {{user}} {{random::a,b}}' } },
    });
    expect(exportWorldbook(parsed).entries).toEqual({
      '0': { uid: 0, key: ['{{char}}'], content: 'Hi {{user}} {{random::a,b}}' },
    });
  });

  it('rejects malformed worldbooks with import_parse_error', () => {
    expectParseError(() => parseWorldbook('x'), /JSON object/);
    expectParseError(() => parseWorldbook({}), /entries must be an object keyed by uid or an array/);
    expectParseError(() => parseWorldbook({ entries: 'nope' }), /entries must be an object/);
    expectParseError(() => parseWorldbook({ entries: 5 }), /entries must be an object/);
    expectParseError(() => parseWorldbook({ entries: { '0': 'text' } }), /entries\.0 must be an object/);
    expectParseError(() => parseWorldbook({ entries: [{ key: [1] }] }), /key must be an array of strings/);
    expectParseError(
      () => parseWorldbook({ entries: [{ key: ['a'], order: '100' }] }),
      /order must be a number/,
    );
    expectParseError(
      () => parseWorldbook({ entries: [{ key: ['a'], constant: 'yes' }] }),
      /constant must be a boolean/,
    );
    expectParseError(() => parseWorldbook({ entries: [{ uid: -1 }] }), /uid must be a non-negative integer/);
    expectParseError(
      () => parseWorldbook({ entries: { '1': { uid: 4 }, '4': { uid: 4 } } }),
      /duplicate worldbook entry uid 4/,
    );
    expectParseError(() => parseWorldbook({ name: 3, entries: {} }), /name must be a string/);
    expectParseError(
      () => characterBookToWorldbook({ entries: {} }),
      /character_book\.entries must be an array/,
    );
    expectParseError(() => characterBookToWorldbook({ entries: [1] }), /entries\[0\] must be an object/);
  });

  it('accepts an empty book', () => {
    expect(exportWorldbook(parseWorldbook({ entries: {} }))).toEqual({ entries: {} });
  });

  describe('hostile files', () => {
    it('reads a comma key list as split, trim and filter did, without a string per comma', () => {
      const lists = [
        'a, b ,c',
        ' , ,, ',
        ',a,,b,',
        '  spaced  key  ,\tx\n,\u00a0y\u00a0,\ufeffz',
        'one',
        '',
        ','.repeat(1000) + ' last ',
      ];
      for (const key of lists) {
        const entry = parseWorldbook({ entries: [{ key, keysecondary: key }] }).entries[0];
        const expected = key
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k.length > 0);
        expect(entry.keys).toEqual(expected);
        expect(entry.keys_secondary).toEqual(expected);
      }
      // 9,000,000 commas took 1.7 s split.
      expect(parseWorldbook({ entries: [{ key: ','.repeat(9_000_000) }] }).entries[0].keys).toEqual([]);
    });

    it('keeps every entry its own copy of the input (no shared objects)', () => {
      const input = { entries: { 1: { key: ['a'], extensions: { x: [1] } } } };
      const book = parseWorldbook(input);
      const raw = book.entries[0].raw;
      expect(raw).toEqual({ key: ['a'], extensions: { x: [1] } });
      expect(raw).not.toBe(input.entries[1]);
      expect(raw.key).not.toBe(input.entries[1].key);
      expect(book.entries[0].keys).not.toBe(raw.key);
      const card = { entries: [{ keys: ['k'], extensions: { triggers: ['normal'] } }] };
      const fromCard = characterBookToWorldbook(card);
      const stEntry = fromCard.entries[0].raw;
      expect(stEntry.key).not.toBe(card.entries[0].keys);
      expect(stEntry.triggers).not.toBe((stEntry.extensions as { triggers: unknown }).triggers);
      expect((fromCard.extra.originalData as typeof card).entries[0].keys).not.toBe(stEntry.key);
    });

    it(`imports at most ${WORLDBOOK_IMPORT_MAX_ENTRIES} entries, counted without copying`, () => {
      const array = (n: number) => Array.from({ length: n }, () => ({}));
      const keyed = (n: number) => Object.fromEntries(array(n).map((e, i) => [String(i), e]));
      for (const entries of [array(WORLDBOOK_IMPORT_MAX_ENTRIES), keyed(WORLDBOOK_IMPORT_MAX_ENTRIES)]) {
        expect(() => checkWorldbookImportEntries(entries)).not.toThrow();
      }
      expect(parseWorldbook({ entries: array(WORLDBOOK_IMPORT_MAX_ENTRIES) }).entries).toHaveLength(
        WORLDBOOK_IMPORT_MAX_ENTRIES,
      );
      for (const entries of [
        array(WORLDBOOK_IMPORT_MAX_ENTRIES + 1),
        keyed(WORLDBOOK_IMPORT_MAX_ENTRIES + 1),
      ]) {
        const error = expectParseError(() => checkWorldbookImportEntries(entries), /more than 20000 entries/);
        expect(error.details).toEqual({ field: 'entries', max_entries: WORLDBOOK_IMPORT_MAX_ENTRIES });
      }
      expect(() => checkWorldbookImportEntries(undefined)).not.toThrow();
    });

    it('refuses a uid a stored entry cannot hold (Postgres integer), keeps it for card books', () => {
      const keyed = (uid: string) => parseWorldbook({ entries: { [uid]: { content: 'x' } } }).entries;
      expect(() => checkWorldbookStoredUids(keyed(String(WORLDBOOK_UID_MAX)))).not.toThrow();
      const error = expectParseError(
        () => checkWorldbookStoredUids(keyed(String(WORLDBOOK_UID_MAX + 1))),
        /uid 2147483648 is above 2147483647/,
      );
      expect(error.details).toEqual({ field: 'entries[2147483648].uid', max_uid: WORLDBOOK_UID_MAX });
      const card = characterBookToWorldbook({ entries: [{ id: 1_700_000_000_000, keys: ['k'] }] });
      expect(card.entries[0].uid).toBe(1_700_000_000_000);
    });
  });
});
