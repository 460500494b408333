import { importParseError, parseJsonText } from './format.rules';

/**
 * Character cards embedded in PNG files (external-formats.md §b "PNG embedding"): the card JSON is UTF-8,
 * base64-encoded, in a `tEXt` chunk with keyword `chara` (V1/V2) or `ccv3` (V3). Pure code on Buffers.
 */

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CARD_KEYWORDS = ['chara', 'ccv3'] as const;
export type PngCardKeyword = (typeof CARD_KEYWORDS)[number];

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO 3309, as used by PNG) over the given bytes. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export interface PngChunk {
  type: string;
  data: Buffer;
}

export function isPng(buffer: Uint8Array): boolean {
  return buffer.length >= 8 && Buffer.from(buffer.subarray(0, 8)).equals(PNG_SIGNATURE);
}

/** Splits a PNG into chunks, checking the signature, lengths and every chunk CRC; ends at IEND. */
export function readPngChunks(input: Uint8Array): PngChunk[] {
  const buffer = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (!isPng(buffer)) throw importParseError('PNG signature missing: the file is not a PNG image');
  const chunks: PngChunk[] = [];
  let offset = 8;
  while (offset < buffer.length) {
    if (offset + 12 > buffer.length)
      throw importParseError(`PNG truncated: incomplete chunk header at byte ${offset}`);
    const length = buffer.readUInt32BE(offset);
    const end = offset + 12 + length;
    if (length > 0x7fffffff || end > buffer.length) {
      throw importParseError(`PNG truncated: chunk at byte ${offset} declares ${length} bytes past the end`);
    }
    const type = buffer.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type))
      throw importParseError(`PNG corrupt: invalid chunk type at byte ${offset}`);
    const crc = buffer.readUInt32BE(end - 4);
    if (crc32(buffer.subarray(offset + 4, end - 4)) !== crc) {
      throw importParseError(`PNG corrupt: CRC mismatch in ${type} chunk at byte ${offset}`);
    }
    chunks.push({ type, data: Buffer.from(buffer.subarray(offset + 8, end - 4)) });
    offset = end;
    if (type === 'IEND') break;
  }
  if (chunks.length === 0 || chunks[0].type !== 'IHDR')
    throw importParseError('PNG corrupt: first chunk is not IHDR');
  if (chunks[chunks.length - 1].type !== 'IEND') throw importParseError('PNG truncated: IEND chunk missing');
  return chunks;
}

export interface PngTextChunk {
  keyword: string;
  text: string;
}

/** Every `tEXt` chunk as keyword and latin1 text (the spec's encoding; card payloads are base64 ASCII). */
export function readPngTextChunks(input: Uint8Array): PngTextChunk[] {
  return readPngChunks(input)
    .filter((chunk) => chunk.type === 'tEXt')
    .map((chunk) => {
      const nul = chunk.data.indexOf(0);
      if (nul < 1) throw importParseError('PNG corrupt: tEXt chunk without keyword');
      return { keyword: chunk.data.toString('latin1', 0, nul), text: chunk.data.toString('latin1', nul + 1) };
    });
}

export interface PngCard {
  /** Which chunk the card came from: `ccv3` wins over `chara` when both exist (as ST reads). */
  keyword: PngCardKeyword;
  /** The decoded card JSON value (not yet interpreted; see character-card.ts). */
  card: unknown;
}

/** Reads the character card of a PNG; a PNG without a `chara`/`ccv3` chunk is an `import_parse_error`. */
export function readPngCard(input: Uint8Array): PngCard {
  const chunks = readPngTextChunks(input);
  for (const keyword of ['ccv3', 'chara'] as const) {
    const chunk = chunks.find((c) => c.keyword.toLowerCase() === keyword);
    if (chunk) return { keyword, card: decodeCardText(chunk.text, keyword) };
  }
  throw importParseError('PNG has no character card: no chara or ccv3 tEXt chunk');
}

function decodeCardText(text: string, keyword: string): unknown {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length === 0) {
    throw importParseError(`PNG ${keyword} chunk is not base64 text`);
  }
  return parseJsonText(Buffer.from(compact, 'base64').toString('utf8'), `PNG ${keyword} chunk`);
}

function encodeChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function textChunk(keyword: string, text: string): Buffer {
  return encodeChunk(
    'tEXt',
    Buffer.concat([Buffer.from(keyword, 'latin1'), Buffer.from([0]), Buffer.from(text, 'latin1')]),
  );
}

/** Card JSON to the base64 text ST stores (UTF-8 JSON, base64). */
export function encodeCardText(card: unknown): string {
  return Buffer.from(typeof card === 'string' ? card : JSON.stringify(card), 'utf8').toString('base64');
}

/**
 * Writes a PNG carrying the given cards as ST does: every existing `chara`/`ccv3` tEXt chunk is removed,
 * then `chara` and (when given) `ccv3` are inserted immediately before IEND. Other chunks are kept byte for byte.
 */
export function writePngCard(image: Uint8Array, cards: { chara?: unknown; ccv3?: unknown }): Buffer {
  const chunks = readPngChunks(image).filter((chunk) => {
    if (chunk.type !== 'tEXt') return true;
    const nul = chunk.data.indexOf(0);
    const keyword = chunk.data.toString('latin1', 0, Math.max(nul, 0)).toLowerCase();
    return !(CARD_KEYWORDS as readonly string[]).includes(keyword);
  });
  const inserted: Buffer[] = [];
  if (cards.chara !== undefined) inserted.push(textChunk('chara', encodeCardText(cards.chara)));
  if (cards.ccv3 !== undefined) inserted.push(textChunk('ccv3', encodeCardText(cards.ccv3)));
  const body = chunks.slice(0, -1).map((chunk) => encodeChunk(chunk.type, chunk.data));
  return Buffer.concat([PNG_SIGNATURE, ...body, ...inserted, encodeChunk('IEND', Buffer.alloc(0))]);
}
