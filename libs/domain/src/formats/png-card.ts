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

/** CRC-32 (ISO 3309, as used by PNG) over the given bytes (`start`..`end`, default all). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export interface PngChunk {
  type: string;
  data: Buffer;
}

export function isPng(buffer: Uint8Array): boolean {
  return buffer.length >= 8 && Buffer.from(buffer.subarray(0, 8)).equals(PNG_SIGNATURE);
}

const TYPE_IHDR = 0x49484452;
const TYPE_IEND = 0x49454e44;
const TYPE_TEXT = 0x74455874; // tEXt

function isAsciiLetter(byte: number): boolean {
  return (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
}

/**
 * Checks a PNG's signature, chunk lengths, types and CRCs (ending at IEND) and returns the byte offset of
 * every chunk. Allocates nothing per chunk: a 5 MiB file can hold 430,000 empty chunks, and building a
 * Buffer and a type string for each took 2.6 s (readPngCard and the import's size check each read it).
 */
function scanPngChunks(buffer: Buffer, onlyType?: number): Uint32Array {
  if (!isPng(buffer)) throw importParseError('PNG signature missing: the file is not a PNG image');
  // A chunk takes at least 12 bytes, so this holds every offset (growing a plain array cost more).
  const offsets = new Uint32Array(Math.floor(buffer.length / 12) + 1);
  let count = 0;
  let offset = 8;
  let first = -1;
  let last = -1;
  while (offset < buffer.length) {
    if (offset + 12 > buffer.length)
      throw importParseError(`PNG truncated: incomplete chunk header at byte ${offset}`);
    const length = buffer.readUInt32BE(offset);
    const end = offset + 12 + length;
    if (length > 0x7fffffff || end > buffer.length) {
      throw importParseError(`PNG truncated: chunk at byte ${offset} declares ${length} bytes past the end`);
    }
    for (let i = offset + 4; i < offset + 8; i++) {
      if (!isAsciiLetter(buffer[i]))
        throw importParseError(`PNG corrupt: invalid chunk type at byte ${offset}`);
    }
    const crc = buffer.readUInt32BE(end - 4);
    if (crc32(buffer, offset + 4, end - 4) !== crc) {
      const type = buffer.toString('latin1', offset + 4, offset + 8);
      throw importParseError(`PNG corrupt: CRC mismatch in ${type} chunk at byte ${offset}`);
    }
    const type = buffer.readUInt32BE(offset + 4);
    if (onlyType === undefined || type === onlyType) offsets[count++] = offset;
    if (first < 0) first = offset;
    last = offset;
    offset = end;
    if (type === TYPE_IEND) break;
  }
  if (first < 0 || buffer.readUInt32BE(first + 4) !== TYPE_IHDR)
    throw importParseError('PNG corrupt: first chunk is not IHDR');
  if (buffer.readUInt32BE(last + 4) !== TYPE_IEND)
    throw importParseError('PNG truncated: IEND chunk missing');
  return offsets.subarray(0, count);
}

function asBuffer(input: Uint8Array): Buffer {
  return Buffer.from(input.buffer, input.byteOffset, input.byteLength);
}

/** Splits a PNG into chunks, checking the signature, lengths and every chunk CRC; ends at IEND. */
export function readPngChunks(input: Uint8Array): PngChunk[] {
  const buffer = asBuffer(input);
  return Array.from(scanPngChunks(buffer), (offset) => {
    const end = offset + 12 + buffer.readUInt32BE(offset);
    return {
      type: buffer.toString('latin1', offset + 4, offset + 8),
      data: Buffer.from(buffer.subarray(offset + 8, end - 4)),
    };
  });
}

export interface PngTextChunk {
  keyword: string;
  text: string;
}

/**
 * The data range of every `tEXt` chunk with its keyword's end (the NUL), flat: `start, nul, end` per
 * chunk; a tEXt chunk without keyword is an `import_parse_error`.
 */
function textChunkRanges(buffer: Buffer): Uint32Array {
  const offsets = scanPngChunks(buffer, TYPE_TEXT);
  const ranges = new Uint32Array(offsets.length * 3);
  for (let i = 0; i < offsets.length; i++) {
    const offset = offsets[i];
    const start = offset + 8;
    const end = start + buffer.readUInt32BE(offset);
    let nul = start;
    while (nul < end && buffer[nul] !== 0) nul++; // a JS loop: Buffer#indexOf per tiny chunk costs more
    if (nul === start || nul === end) throw importParseError('PNG corrupt: tEXt chunk without keyword');
    ranges[3 * i] = start;
    ranges[3 * i + 1] = nul;
    ranges[3 * i + 2] = end;
  }
  return ranges;
}

/** Every `tEXt` chunk as keyword and latin1 text (the spec's encoding; card payloads are base64 ASCII). */
export function readPngTextChunks(input: Uint8Array): PngTextChunk[] {
  const buffer = asBuffer(input);
  const ranges = textChunkRanges(buffer);
  const chunks: PngTextChunk[] = [];
  for (let i = 0; i < ranges.length; i += 3)
    chunks.push(textChunkOf(buffer, ranges[i], ranges[i + 1], ranges[i + 2]));
  return chunks;
}

function textChunkOf(buffer: Buffer, start: number, nul: number, end: number): PngTextChunk {
  return { keyword: buffer.toString('latin1', start, nul), text: buffer.toString('latin1', nul + 1, end) };
}

/**
 * The `tEXt` chunk `readPngCard` reads (the first `ccv3`, else the first `chara`, keywords in any case),
 * or null. Builds strings only for that chunk (a PNG may hold hundreds of thousands of tiny tEXt chunks).
 */
export function readPngCardChunk(
  input: Uint8Array,
): (PngTextChunk & { card_keyword: PngCardKeyword }) | null {
  const buffer = asBuffer(input);
  const ranges = textChunkRanges(buffer);
  for (const keyword of ['ccv3', 'chara'] as const) {
    for (let i = 0; i < ranges.length; i += 3) {
      const [start, nul, end] = [ranges[i], ranges[i + 1], ranges[i + 2]];
      if (nul - start !== keyword.length) continue;
      if (buffer.toString('latin1', start, nul).toLowerCase() !== keyword) continue;
      return { ...textChunkOf(buffer, start, nul, end), card_keyword: keyword };
    }
  }
  return null;
}

export interface PngCard {
  /** Which chunk the card came from: `ccv3` wins over `chara` when both exist (as ST reads). */
  keyword: PngCardKeyword;
  /** The decoded card JSON value (not yet interpreted; see character-card.ts). */
  card: unknown;
}

/** Reads the character card of a PNG; a PNG without a `chara`/`ccv3` chunk is an `import_parse_error`. */
export function readPngCard(input: Uint8Array): PngCard {
  return decodePngCardChunk(readPngCardChunk(input));
}

/** The card of a chunk found by `readPngCardChunk` (null: the PNG has none, an `import_parse_error`). */
export function decodePngCardChunk(chunk: (PngTextChunk & { card_keyword: PngCardKeyword }) | null): PngCard {
  if (!chunk) throw importParseError('PNG has no character card: no chara or ccv3 tEXt chunk');
  return { keyword: chunk.card_keyword, card: decodeCardText(chunk.text, chunk.card_keyword) };
}

/**
 * A card chunk's text without whitespace (what is base64-decoded). A loop, not `replace(/\s+/g, '')`:
 * 5 MB of " A" took 1.8 s that way. The text is latin1, whose `\s` are 0x09-0x0D, 0x20 and 0xA0.
 */
export function compactCardText(text: string): string {
  if (!/\s/.test(text)) return text;
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0xa0) continue;
    if (c > 0xff) return text.replace(/\s+/g, ''); // not latin1 (never from a PNG): the general rule
    out[n++] = c;
  }
  return out.toString('latin1', 0, n);
}

function decodeCardText(text: string, keyword: string): unknown {
  const compact = compactCardText(text);
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
