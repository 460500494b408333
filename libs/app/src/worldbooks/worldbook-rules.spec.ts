import {
  characterBookToWorldbook,
  DomainError,
  normalizeWorldbookEntry,
  parseWorldbook,
} from '@hearth/domain';
import {
  detailStEntry,
  exportFile,
  exportParsedFile,
  newStEntryTemplate,
  parseWorldbookPayload,
  replayVersions,
  searchText,
  type WorldbookVersionPayload,
} from './worldbook-rules';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as DomainError).code;
  }
  return null;
};

describe('worldbook rules', () => {
  it('replays a snapshot and its deltas into the whole file', () => {
    const snapshot: WorldbookVersionPayload = {
      format: 'worldbook_snapshot',
      file: {
        name: 'A',
        extensions: { x: 1 },
        entries: { '0': { uid: 0, key: ['a'] }, '2': { uid: 2, key: ['c'] } },
      },
    };
    const delta1: WorldbookVersionPayload = {
      format: 'worldbook_delta',
      snapshot_version_no: 1,
      name: 'B',
      extra: { extensions: { x: 2 } },
      upserts: [{ uid: 1, key: ['b'] }],
      deleted_uids: [2],
    };
    const delta2: WorldbookVersionPayload = {
      format: 'worldbook_delta',
      snapshot_version_no: 1,
      name: 'B',
      extra: { extensions: { x: 2 } },
      upserts: [
        { uid: 0, key: ['A!'] },
        { uid: 10, key: ['k'] },
      ],
      deleted_uids: [],
    };
    const file = replayVersions([
      { version_no: 1, payload: snapshot },
      { version_no: 2, payload: delta1 },
      { version_no: 3, payload: delta2 },
    ]);
    expect(file).toEqual({
      name: 'B',
      extensions: { x: 2 },
      entries: { '0': { uid: 0, key: ['A!'] }, '1': { uid: 1, key: ['b'] }, '10': { uid: 10, key: ['k'] } },
    });
    expect(Object.keys(file.entries as object)).toEqual(['0', '1', '10']);
    expect(() => replayVersions([{ version_no: 2, payload: delta1 }])).toThrow(/no snapshot/);
    // The snapshot itself is not changed by replaying.
    expect(Object.keys(snapshot.file.entries as object)).toEqual(['0', '2']);
  });

  it('validates a PUT payload with worldbook_validation_error and drops null global fields', () => {
    const ok = parseWorldbookPayload({
      name: 'ignored',
      scanDepth: null,
      recursive: true,
      maxRecursionSteps: 3,
      entries: [{ key: ['a'], position: 7, role: 2, selectiveLogic: 3, delayUntilRecursion: true }],
    });
    expect(ok.extra).toEqual({ recursive: true, maxRecursionSteps: 3 });
    expect(ok.book.entries[0]).toMatchObject({ uid: 0, position: 7, role: 2, delay_until_recursion: 1 });
    for (const data of [
      { entries: 1 },
      { entries: [{ key: [], depth: -1 }] },
      { entries: [{ key: [], scanDepth: 1.5 }] },
      { entries: [{ key: [], delayUntilRecursion: 1.5 }] },
      { entries: [], maxRecursionSteps: -1 },
      { entries: [], caseSensitive: 'yes' },
    ]) {
      expect([JSON.stringify(data), code(() => parseWorldbookPayload(data))]).toEqual([
        JSON.stringify(data),
        'worldbook_validation_error',
      ]);
    }
  });

  it('shows every spec 3 field in the detail entry, over the raw fields', () => {
    const entry = normalizeWorldbookEntry({ uid: 4, key: ['x'], content: 'c', custom: true }, 4);
    expect(detailStEntry(entry)).toEqual({
      uid: 4,
      key: ['x'],
      keysecondary: [],
      selective: true,
      selectiveLogic: 0,
      constant: false,
      content: 'c',
      comment: '',
      position: 0,
      order: 100,
      depth: 4,
      role: 0,
      disable: false,
      scanDepth: null,
      caseSensitive: null,
      matchWholeWords: null,
      custom: true,
    });
  });

  it('builds the same file for freshly parsed entries as the full export does', () => {
    const parsed = parseWorldbook({
      name: 'n',
      extensions: { a: 1 },
      entries: {
        '3': { key: 'a, b', delayUntilRecursion: false, role: null, extra: [1] },
        '5': { uid: 5, key: [], selectiveLogic: 2 },
      },
    });
    const { name: _name, ...extra } = parsed.extra;
    expect(exportParsedFile('Book', extra, parsed.entries)).toEqual(
      exportFile('Book', extra, parsed.entries),
    );
    const card = characterBookToWorldbook({ entries: [{ keys: ['k'], content: 'c', enabled: false }] });
    expect(exportParsedFile('Card', card.extra, card.entries)).toEqual(
      exportFile('Card', card.extra, card.entries),
    );
  });

  it('gives new entries the ST template whose normalised form is spec 3 defaults', () => {
    const entry = normalizeWorldbookEntry(newStEntryTemplate(3), 3);
    expect(entry).toMatchObject({
      uid: 3,
      keys: [],
      selective: true,
      order: 100,
      depth: 4,
      delay_until_recursion: null,
      outlet_name: '',
    });
    expect(searchText({ keys: ['Dragon'], keys_secondary: ['Fire'], comment: 'Note', content: 'Text' })).toBe(
      'dragon\nfire\nnote\ntext',
    );
  });
});
