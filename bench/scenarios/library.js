'use strict';
// LIBRARY (issue 3 benchmark): import of a generated 5,000-entry worldbook, entry list paging with `q`
// over its 5,000 entries (p50/p99), batch reorder of 100 entries (p50/p99), and, to show what a write
// costs on a big book, a one-entry PATCH and a full PUT. Every figure is also printed as a ratio to
// `JSON.parse` of the same file in this process (the floor: nothing can import a file faster than it
// can parse it). Figures are information; the scenario fails only when a request does not succeed.
//
// Hook for the lead: the 2 MB character card import (`POST /import/character`) is one more entry in
// PARTS below (a function `(ctx, env) => ({label, ms, ratio})`); `env.parseMs(text)` gives the floor.
const h = require('../lib/harness');

const ENTRIES = 5_000;
const IMPORT_ROUNDS = 3;
const QUERY_REQUESTS = 200;
const REORDER_REQUESTS = 30;
const PATCH_REQUESTS = 30;

/** A deterministic ST world file: entries keyed by uid, ~400 bytes of content each, varied keys. */
function generateWorldFile(count) {
  const words = [
    'dragon',
    'forest',
    'river',
    'castle',
    'sword',
    'moon',
    'ember',
    'frost',
    'oracle',
    'tavern',
  ];
  const entries = {};
  for (let uid = 0; uid < count; uid++) {
    const a = words[uid % words.length];
    const b = words[(uid * 7) % words.length];
    entries[String(uid)] = {
      uid,
      key: [`${a}-${uid}`, `${b} lore`, `/${a}\\s+${b}/i`],
      keysecondary: uid % 4 === 0 ? [`${b}-secondary`] : [],
      comment: `Entry ${uid}: ${a} and ${b}`,
      content: `{{char}} remembers the ${a} near the ${b}. `.repeat(8) + `Marker ${uid}.`,
      constant: uid % 50 === 0,
      vectorized: false,
      selective: true,
      selectiveLogic: 0,
      addMemo: true,
      order: 100 + (uid % 100),
      position: uid % 8,
      disable: uid % 9 === 0,
      excludeRecursion: false,
      preventRecursion: false,
      delayUntilRecursion: 0,
      probability: 100,
      useProbability: true,
      depth: 4,
      group: '',
      groupOverride: false,
      groupWeight: 100,
      scanDepth: null,
      caseSensitive: null,
      matchWholeWords: null,
      useGroupScoring: null,
      automationId: '',
      role: 0,
      sticky: 0,
      cooldown: 0,
      delay: 0,
      displayIndex: uid,
    };
  }
  return { entries };
}

async function call(ctx, method, path, body) {
  const t0 = h.nowMs();
  const res = await fetch(`${ctx.api.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ctx.adminKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const ms = h.nowMs() - t0;
  return { status: res.status, ms, json: text ? JSON.parse(text) : null };
}

function expectStatus(res, status, what) {
  if (res.status !== status)
    throw new Error(`LIBRARY ${what}: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  return res;
}

/** Median time of `JSON.parse(text)` over a few runs (after one warm-up). */
function parseMs(text, runs = 7) {
  JSON.parse(text);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = h.nowMs();
    JSON.parse(text);
    times.push(h.nowMs() - t0);
  }
  return h.median(times);
}

async function importWorldbook(ctx, env) {
  const times = [];
  let bookId = null;
  for (let i = 0; i < IMPORT_ROUNDS; i++) {
    const res = expectStatus(await call(ctx, 'POST', '/import/worldbook', env.importBody), 201, 'import');
    if (res.json.data.entry_count !== ENTRIES)
      throw new Error(`LIBRARY import stored ${res.json.data.entry_count} entries`);
    times.push(res.ms);
    bookId = res.json.data.id;
  }
  env.bookId = bookId;
  const ms = h.median(times);
  return {
    label: `import worldbook (${ENTRIES} entries, ${(env.fileBytes / 1e6).toFixed(1)} MB)`,
    ms: h.round(ms),
    ratio: h.round(ms / env.floorMs),
  };
}

async function entryListQuery(ctx, env) {
  const terms = [
    'dragon',
    'MARKER 4999',
    'frost lore',
    'entry 12',
    'oracle-',
    'nothing-matches-this',
    'tavern',
    'remembers',
  ];
  const times = [];
  for (let i = 0; i < QUERY_REQUESTS; i++) {
    const q = encodeURIComponent(terms[i % terms.length]);
    const offset = (i % 4) * 50;
    const res = expectStatus(
      await call(ctx, 'GET', `/worldbooks/${env.bookId}/entries?q=${q}&limit=50&offset=${offset}`),
      200,
      'entry list',
    );
    times.push(res.ms);
  }
  const s = h.summarize(times);
  return {
    label: `entry list q= over ${ENTRIES} (${QUERY_REQUESTS} req)`,
    p50: s.p50,
    p99: s.p99,
    ratio: h.round(s.p50 / env.floorMs),
  };
}

async function batchReorder(ctx, env) {
  const list = expectStatus(
    await call(ctx, 'GET', `/worldbooks/${env.bookId}/entries?limit=200&sort_by=uid`),
    200,
    'ids',
  );
  const ids = list.json.data.map((e) => e.id);
  const times = [];
  for (let i = 0; i < REORDER_REQUESTS; i++) {
    const start = (i * 37) % 100;
    const items = ids.slice(start, start + 100).map((id, k) => ({ id, order: 1000 + i * 100 + k }));
    const res = expectStatus(
      await call(ctx, 'PUT', `/worldbooks/${env.bookId}/entries/batch/reorder`, { items }),
      200,
      'reorder',
    );
    if (res.json.data.meta.updated !== 100) throw new Error('LIBRARY reorder did not update 100 entries');
    times.push(res.ms);
  }
  env.entryId = ids[0];
  const s = h.summarize(times);
  return {
    label: `batch reorder 100 of ${ENTRIES} (${REORDER_REQUESTS} req)`,
    p50: s.p50,
    p99: s.p99,
    ratio: h.round(s.p50 / env.floorMs),
  };
}

async function singlePatch(ctx, env) {
  const times = [];
  for (let i = 0; i < PATCH_REQUESTS; i++) {
    const res = expectStatus(
      await call(ctx, 'PATCH', `/worldbooks/${env.bookId}/entries/${env.entryId}`, {
        comment: `patched ${i}`,
      }),
      200,
      'patch',
    );
    times.push(res.ms);
  }
  const s = h.summarize(times);
  return {
    label: `one-entry PATCH on ${ENTRIES} (${PATCH_REQUESTS} req)`,
    p50: s.p50,
    p99: s.p99,
    ratio: h.round(s.p50 / env.floorMs),
  };
}

async function fullPut(ctx, env) {
  const detail = expectStatus(await call(ctx, 'GET', `/worldbooks/${env.bookId}`), 200, 'detail');
  const data = detail.json.data.data;
  for (const entry of data.entries.slice(0, 10)) entry.content += ' (edited)';
  const res = expectStatus(
    await call(ctx, 'PUT', `/worldbooks/${env.bookId}`, {
      name: 'bench put',
      data,
      expected_version: detail.json.data.version,
    }),
    200,
    'put',
  );
  return {
    label: `PUT whole book (${ENTRIES} entries, 10 changed)`,
    ms: h.round(res.ms),
    ratio: h.round(res.ms / env.floorMs),
  };
}

const CARD_ROUNDS = 5;

/** A PNG chunk: length, type, data, CRC-32 over type and data. */
function pngChunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(require('node:zlib').crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A 2 MB PNG character card, as cards are shared: ~1.9 MB of image data and a V2 card (~150 KB with a
 * 200-entry character_book) in the `chara` tEXt chunk, sent base64 in JSON (`png_base64`).
 */
function generateCardPng() {
  const book = {
    name: 'bench book',
    entries: Array.from({ length: 200 }, (_, i) => ({
      keys: [`place-${i}`, `person ${i}`],
      content: `Lore line ${i}: {{char}} knows about place ${i}. `.repeat(12),
      extensions: {},
      enabled: true,
      insertion_order: 100 + i,
      id: i,
    })),
  };
  const card = {
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: {
      name: 'Bench Card',
      description: 'A long description. '.repeat(200),
      personality: 'calm',
      scenario: 'A benchmark.',
      first_mes: 'Hello {{user}}.',
      mes_example: '<START>\n{{user}}: hi\n{{char}}: hello',
      creator_notes: '',
      system_prompt: '',
      post_history_instructions: '',
      alternate_greetings: ['Hi again.'],
      tags: ['bench'],
      creator: 'bench',
      character_version: '1',
      extensions: {},
      character_book: book,
    },
  };
  const cardText = JSON.stringify(card);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(512, 0);
  ihdr.writeUInt32BE(512, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const image = Buffer.alloc(1_900_000);
  for (let i = 0; i < image.length; i++) image[i] = (i * 2654435761) >>> 24;
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk(
      'tEXt',
      Buffer.concat([
        Buffer.from('chara\0', 'latin1'),
        Buffer.from(Buffer.from(cardText).toString('base64'), 'latin1'),
      ]),
    ),
    pngChunk('IDAT', image),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
  return { png, cardText };
}

async function importCharacterCard(ctx) {
  const { png, cardText } = generateCardPng();
  const body = JSON.stringify({ create_session: false, png_base64: png.toString('base64') });
  const floor = parseMs(cardText);
  const times = [];
  for (let i = 0; i < CARD_ROUNDS; i++) {
    const res = expectStatus(await call(ctx, 'POST', '/import/character', body), 201, 'card import');
    times.push(res.ms);
  }
  const s = h.summarize(times);
  return {
    label: `import ${(png.length / 1e6).toFixed(2)} MB PNG card (${(Buffer.byteLength(cardText) / 1e3).toFixed(0)} KB card JSON, ${CARD_ROUNDS} req; floor = JSON.parse of the card, ${h.round(floor)} ms)`,
    p50: s.p50,
    p99: s.p99,
    ratio: h.round(s.p50 / Math.max(floor, 0.001)),
  };
}

/** The parts, in order (later parts use the book the import made). */
const PARTS = [importWorldbook, entryListQuery, batchReorder, singlePatch, fullPut, importCharacterCard];

async function run(ctx) {
  const probe = await call(ctx, 'GET', '/worldbooks?limit=1');
  if (probe.status === 404) throw new ctx.NotMeasured('GET /worldbooks is not served');
  const file = generateWorldFile(ENTRIES);
  const fileText = JSON.stringify(file);
  const env = {
    fileBytes: Buffer.byteLength(fileText),
    floorMs: parseMs(fileText),
    importBody: JSON.stringify({ name: 'bench library', data: file }),
    parseMs,
  };
  h.line(
    `LIBRARY floor: JSON.parse of the ${(env.fileBytes / 1e6).toFixed(2)} MB file = ${h.round(env.floorMs)} ms`,
  );
  const figures = [];
  for (const part of PARTS) {
    const figure = await part(ctx, env);
    figures.push(figure);
    const timing = figure.ms !== undefined ? `${figure.ms} ms` : `p50=${figure.p50} ms p99=${figure.p99} ms`;
    h.line(`LIBRARY ${figure.label}: ${timing} ratio=${figure.ratio}x JSON.parse (info)`);
  }
  const file_ = h.writeResult('LIBRARY', {
    floorMs: h.round(env.floorMs),
    fileBytes: env.fileBytes,
    figures,
    pass: true,
  });
  return { pass: true, file: file_ };
}

module.exports = { id: 'LIBRARY', run };
