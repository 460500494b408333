import { parseCharacterCard } from './character-card';
import { expectFieldEquivalent, expectParseError, readFixture } from './format.test-support';
import { deflateSync } from 'node:zlib';
import {
  compactCardText,
  crc32,
  encodeCardText,
  readPngCard,
  readPngCardChunk,
  readPngChunks,
  readPngTextChunks,
  writePngCard,
} from './png-card';

const PNG = readFixture('characters', 'default_CodingSensei.png');

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A tiny PNG assembled by hand: signature, IHDR, the given tEXt chunks, IEND. */
function tinyPng(texts: Array<[string, string]>): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const textChunks = texts.map(([k, v]) => chunk('tEXt', Buffer.from(`${k}\0${v}`, 'latin1')));
  return Buffer.concat([sig, chunk('IHDR', ihdr), ...textChunks, chunk('IEND', Buffer.alloc(0))]);
}

describe('png-card', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('reads the fixture PNG card from its chara chunk', () => {
    const { keyword, card } = readPngCard(PNG);
    expect(keyword).toBe('chara');
    const parsed = parseCharacterCard(card);
    expect(parsed.source_format).toBe('chara_card_v2');
    expect(parsed.data.name).toBe('Coding Sensei');
  });

  it('prefers ccv3 over chara and finds keywords case-insensitively', () => {
    const v2 = { spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Two' } };
    const v3 = { spec: 'chara_card_v3', spec_version: '3.0', data: { name: 'Three' } };
    const png = tinyPng([
      ['Chara', encodeCardText(v2)],
      ['CCV3', encodeCardText(v3)],
    ]);
    expect(readPngCard(png)).toEqual({ keyword: 'ccv3', card: v3 });
    expect(readPngCard(tinyPng([['CHARA', encodeCardText(v2)]]))).toEqual({ keyword: 'chara', card: v2 });
  });

  it('writes chara then ccv3 before IEND, replacing old card chunks and keeping the image', () => {
    const original = readPngCard(PNG).card as Record<string, unknown>;
    const v3 = { ...original, spec: 'chara_card_v3', spec_version: '3.0' };
    const out = writePngCard(PNG, { chara: original, ccv3: v3 });
    const types = readPngChunks(out).map((c) => c.type);
    expect(types).toEqual(['IHDR', 'IDAT', 'tEXt', 'tEXt', 'IEND']);
    expect(readPngTextChunks(out).map((t) => t.keyword)).toEqual(['chara', 'ccv3']);
    const idat = (png: Buffer) => readPngChunks(png).find((c) => c.type === 'IDAT')!.data;
    expect(idat(out).equals(idat(PNG))).toBe(true);
    expect(readPngCard(out)).toEqual({ keyword: 'ccv3', card: v3 });
    expectFieldEquivalent(readPngCard(writePngCard(out, { chara: original })).card, original);
  });

  it('keeps unicode and macros through base64 UTF-8', () => {
    const card = {
      spec: 'chara_card_v2',
      spec_version: '2.0',
      data: { name: 'Ærø 猫', first_mes: 'Hi {{user}}, I am {{char}}' },
    };
    const back = readPngCard(writePngCard(tinyPng([]), { chara: card })).card;
    expect(back).toEqual(card);
  });

  it('rejects a file that is not a PNG', () => {
    expectParseError(() => readPngCard(Buffer.from('{"name":"x"}')), /not a PNG/);
    expectParseError(() => readPngCard(Buffer.alloc(0)), /not a PNG/);
  });

  it('rejects a PNG with a corrupted chunk (CRC mismatch)', () => {
    const bad = Buffer.from(PNG);
    bad[100] ^= 0xff; // inside IDAT
    expectParseError(() => readPngCard(bad), /CRC mismatch in IDAT/);
  });

  it('rejects a truncated PNG', () => {
    expectParseError(() => readPngCard(PNG.subarray(0, 5000)), /truncated/);
    expectParseError(() => readPngCard(PNG.subarray(0, PNG.length - 12)), /IEND chunk missing/);
  });

  it('rejects a PNG without a card chunk', () => {
    expectParseError(() => readPngCard(tinyPng([['Comment', 'hello']])), /no character card/);
    expectParseError(() => readPngCard(writePngCard(PNG, {})), /no character card/);
  });

  it('rejects a card chunk that is not base64 JSON', () => {
    expectParseError(() => readPngCard(tinyPng([['chara', '!!!not base64!!!']])), /not base64/);
    expectParseError(
      () => readPngCard(tinyPng([['chara', Buffer.from('{"name": oops').toString('base64')]])),
      /not valid JSON/,
    );
  });

  describe('hostile PNGs (5 MiB upload limit)', () => {
    const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const ihdr = chunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]));
    const iend = chunk('IEND', Buffer.alloc(0));
    const card = { spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Many' } };

    it('reads the card behind 400,000 tiny chunks (tEXt and others), checking every CRC', () => {
      const empty = chunk('abCd', Buffer.alloc(0));
      const tiny = chunk('tEXt', Buffer.from('k\0', 'latin1'));
      const filler = Array.from({ length: 400_000 }, (_, i) => (i % 2 ? tiny : empty));
      const cardChunk = chunk('tEXt', Buffer.from(`chara\0${encodeCardText(card)}`, 'latin1'));
      const png = Buffer.concat([sig, ihdr, ...filler, cardChunk, iend]);
      expect(png.length).toBeLessThan(5 * 1024 * 1024);
      expect(readPngCard(png)).toEqual({ keyword: 'chara', card });
      expect(readPngTextChunks(png)).toHaveLength(200_001);
      const bad = Buffer.from(png);
      bad[bad.length - 13] ^= 0xff; // the card chunk's CRC
      expectParseError(() => readPngCard(bad), /CRC mismatch in tEXt/);
    });

    it('never inflates compressed text chunks (a zTXt "chara" chunk is no card)', () => {
      // 100 MB of zeros deflate to ~100 KB: ST reads tEXt only, so does Hearth.
      const bomb = chunk('zTXt', Buffer.concat([Buffer.from('chara\0\0'), deflateSync(Buffer.alloc(100e6))]));
      expectParseError(() => readPngCard(Buffer.concat([sig, ihdr, bomb, iend])), /no character card/);
    });

    it('finds the card chunk and strips whitespace as replace(/\\s+/g) does, in one pass', () => {
      const text = encodeCardText(card);
      const spaced = [...text]
        .map((c, i) => c + ['', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0'][i % 8])
        .join('');
      expect(compactCardText(spaced)).toBe(spaced.replace(/\s+/g, ''));
      expect(compactCardText(text)).toBe(text);
      const png = tinyPng([
        ['other', 'x'],
        ['chara', spaced],
      ]);
      expect(readPngCardChunk(png)).toEqual({ keyword: 'chara', text: spaced, card_keyword: 'chara' });
      expect(readPngCard(png)).toEqual({ keyword: 'chara', card });
      expect(readPngCardChunk(tinyPng([['other', 'x']]))).toBeNull();
      // 5 MB of " A" strips to base64 that is not JSON (it took 1.8 s with the regex replace).
      expectParseError(() => readPngCard(tinyPng([['chara', ' A'.repeat(2_500_000)]])), /not valid JSON/);
    });

    it('still rejects a tEXt chunk without keyword', () => {
      const noNul = chunk('tEXt', Buffer.from('chara', 'latin1'));
      expectParseError(() => readPngCard(Buffer.concat([sig, ihdr, noNul, iend])), /without keyword/);
      const empty = chunk('tEXt', Buffer.from('\0text', 'latin1'));
      expectParseError(() => readPngTextChunks(Buffer.concat([sig, ihdr, empty, iend])), /without keyword/);
    });
  });
});
