import { exportCharacterCard, parseCharacterCard, readCharacterCardFile } from './character-card';
import {
  expectFieldEquivalent,
  expectParseError,
  fixtureFiles,
  readFixture,
  readJsonFixture,
} from './format.test-support';
import { readPngCard } from './png-card';

const JSON_CARDS = fixtureFiles('characters', '.json');

describe('character-card', () => {
  it('has the three JSON card fixtures', () => {
    expect(JSON_CARDS).toHaveLength(3);
  });

  it.each(JSON_CARDS)('%s round-trips to an equivalent card in its own format', (file) => {
    const original = readJsonFixture('characters', file);
    const parsed = parseCharacterCard(original);
    expect(parsed.source_format).toBe(original.spec);
    const format = original.spec === 'chara_card_v3' ? 'v3' : 'v2';
    expectFieldEquivalent(exportCharacterCard(parsed, format), original);
  });

  it('the PNG fixture card round-trips to its embedded JSON', () => {
    const { card } = readPngCard(readFixture('characters', 'default_CodingSensei.png'));
    expectFieldEquivalent(exportCharacterCard(parseCharacterCard(card), 'v2'), card);
  });

  it('keeps the embedded character_book exactly as imported', () => {
    const original = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
    const parsed = parseCharacterCard(original);
    expect(parsed.data.character_book).toEqual((original.data as Record<string, unknown>).character_book);
    expect(exportCharacterCard(parsed, 'v2').data).toHaveProperty(
      'character_book',
      (original.data as Record<string, unknown>).character_book,
    );
  });

  it('exports v2 and v3 envelopes with spec values and V3 rules', () => {
    const parsed = parseCharacterCard(readJsonFixture('characters', 'FluxTheCat.chara_card_v2.json'));
    const v2 = exportCharacterCard(parsed, 'v2');
    expect([v2.spec, v2.spec_version]).toEqual(['chara_card_v2', '2.0']);
    const v3 = exportCharacterCard(parsed, 'v3');
    expect([v3.spec, v3.spec_version]).toEqual(['chara_card_v3', '3.0']);
    const data = v3.data as Record<string, unknown>;
    expect(data.group_only_greetings).toEqual([]);
    for (const field of [
      'assets',
      'nickname',
      'source',
      'creation_date',
      'modification_date',
      'creator_notes_multilingual',
    ]) {
      expect(data).not.toHaveProperty(field);
    }
    const withV3 = parseCharacterCard({
      spec: 'chara_card_v3',
      spec_version: '3.0',
      data: {
        name: 'N',
        nickname: 'Nick',
        source: ['x'],
        creation_date: 1700000000,
        assets: [{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }],
        group_only_greetings: ['g'],
        custom_field: { a: 1 },
      },
    });
    const out = exportCharacterCard(withV3, 'v3').data as Record<string, unknown>;
    expect(out).toMatchObject({
      nickname: 'Nick',
      source: ['x'],
      creation_date: 1700000000,
      group_only_greetings: ['g'],
      custom_field: { a: 1 },
    });
    expect(out.assets).toEqual([{ type: 'icon', uri: 'ccdefault:', name: 'main', ext: 'png' }]);
    expect(out).not.toHaveProperty('modification_date');
  });

  it('fills missing data fields with ST defaults', () => {
    const parsed = parseCharacterCard({ spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Bare' } });
    expect(parsed.data).toEqual({
      name: 'Bare',
      description: '',
      personality: '',
      scenario: '',
      first_mes: '',
      mes_example: '',
      creator_notes: '',
      system_prompt: '',
      post_history_instructions: '',
      alternate_greetings: [],
      tags: [],
      creator: '',
      character_version: '',
      extensions: {},
    });
  });

  it('parses a legacy flat card and keeps its fields on export', () => {
    const legacy = {
      name: 'Old',
      description: '{{char}} is old.',
      personality: 'calm',
      scenario: 's',
      first_mes: 'Hello {{user}}',
      mes_example: '<START>',
      creatorcomment: 'notes',
      talkativeness: 0.7,
      fav: 'true',
      tags: 'a, b,,c',
      create_date: '2023',
      chat: 'Old - 1',
    };
    const parsed = parseCharacterCard(legacy);
    expect(parsed.source_format).toBe('legacy');
    expect(parsed.source_spec_version).toBeNull();
    expect(parsed.data).toMatchObject({
      name: 'Old',
      creator_notes: 'notes',
      tags: ['a', 'b', 'c'],
      extensions: { talkativeness: 0.7, fav: true },
    });
    const out = exportCharacterCard(parsed, 'v2');
    expect(out).toMatchObject({ ...legacy, spec: 'chara_card_v2', spec_version: '2.0' });
  });

  it('never expands macros', () => {
    const parsed = parseCharacterCard(readJsonFixture('characters', 'Seraphina.chara.chara_card_v2.json'));
    expect(parsed.data.description).toContain('{{user}}');
    expect(parsed.data.description).toContain('{{char}}');
    const out = JSON.stringify(exportCharacterCard(parsed, 'v3'));
    expect(out).toContain('{{char}}');
    expect(out).toContain('{{user}}');
  });

  it('refreshes ST V1 top-level duplicates from data on export', () => {
    const parsed = parseCharacterCard(readJsonFixture('characters', 'FluxTheCat.chara_card_v2.json'));
    parsed.data.name = 'Renamed';
    parsed.data.creator_notes = 'new notes';
    const out = exportCharacterCard(parsed, 'v2');
    expect([out.name, out.creatorcomment, (out.data as Record<string, unknown>).name]).toEqual([
      'Renamed',
      'new notes',
      'Renamed',
    ]);
  });

  it('warns about a newer V3 spec_version and still imports', () => {
    const parsed = parseCharacterCard({
      spec: 'chara_card_v3',
      spec_version: '3.1',
      data: { name: 'Future' },
    });
    expect(parsed.warnings).toEqual([expect.stringContaining('3.1')]);
    expect(parsed.data.name).toBe('Future');
  });

  it('rejects input that is not a card with import_parse_error', () => {
    expectParseError(() => parseCharacterCard('text'), /JSON object/);
    expectParseError(() => parseCharacterCard([]), /JSON object/);
    expectParseError(() => parseCharacterCard({ description: 'no name' }), /not a character card/);
    expectParseError(
      () => parseCharacterCard({ spec: 'chara_card_v9', data: {} }),
      /unsupported character card spec/,
    );
    expectParseError(() => parseCharacterCard({ spec: 'chara_card_v2', spec_version: '2.0' }), /data object/);
    expectParseError(
      () => parseCharacterCard({ spec: 'chara_card_v2', data: { name: 5 } }),
      /data\.name must be a string/,
    );
    expectParseError(
      () => parseCharacterCard({ spec: 'chara_card_v2', data: { name: 'x', tags: 'a,b' } }),
      /data\.tags must be an array of strings/,
    );
    expectParseError(
      () => parseCharacterCard({ spec: 'chara_card_v2', data: { name: 'x', extensions: [] } }),
      /data\.extensions must be an object/,
    );
    expectParseError(
      () =>
        parseCharacterCard({ spec: 'chara_card_v3', data: { name: 'x', character_book: { entries: {} } } }),
      /character_book\.entries must be an array/,
    );
    expectParseError(() => parseCharacterCard({ name: 'x', first_mes: 3 }), /first_mes must be a string/);
  });

  it('reads card files as PNG or JSON bytes', () => {
    expect(readCharacterCardFile(readFixture('characters', 'default_CodingSensei.png')).data.name).toBe(
      'Coding Sensei',
    );
    const json = readFixture('characters', 'FluxTheCat.chara_card_v2.json');
    expect(readCharacterCardFile(json).data.name).toBe(
      parseCharacterCard(JSON.parse(json.toString('utf8'))).data.name,
    );
    expectParseError(
      () => readCharacterCardFile(Buffer.from('{"spec": "chara_card_v2", ')),
      /character card file is not valid JSON/,
    );
  });
});
