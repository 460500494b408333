import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  crc32,
  exportCharacterCard,
  parseCharacterCard,
  readPngCard,
  writePngCard,
  type JsonObject,
} from '@hearth/domain';
import {
  expectFieldEquivalent,
  fixtureFiles,
  readFixture,
  readJsonFixture,
} from '@hearth/domain/formats/format.test-support';
import { assetVersionsRepository, charactersRepository, operationLogsRepository } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { startTestApp, type TestApp } from '../support/test-app';

const MAX_BODY = 200 * 1024;
const MAX_PNG = 5 * 1024 * 1024;
const JSON_CARDS = fixtureFiles('characters', '.json');
const PNG_CARDS = fixtureFiles('characters', '.png');

/** A PNG of exactly `size` bytes: the image with a filler chunk before IEND. */
function pngOfSize(image: Buffer, size: number): Buffer {
  const iend = image.length - 12;
  const fillerLength = size - image.length - 12;
  if (fillerLength < 0) throw new Error('image already larger than the requested size');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(fillerLength, 0);
  head.write('flLr', 4, 'latin1');
  const data = Buffer.alloc(fillerLength, 0x61);
  const raw = Buffer.concat([image.subarray(0, iend), head, data, Buffer.alloc(4), image.subarray(iend)]);
  return fixCrcs(raw);
}

/** Recomputes every chunk CRC of a PNG built by hand. */
function fixCrcs(png: Buffer): Buffer {
  const out = Buffer.from(png);
  let offset = 8;
  while (offset < out.length) {
    const length = out.readUInt32BE(offset);
    const end = offset + 12 + length;
    out.writeUInt32BE(crc32(out.subarray(offset + 4, end - 4)), end - 4);
    offset = end;
  }
  return out;
}

/** A chara_card_v2 whose JSON text is exactly `size` bytes. */
function cardTextOfSize(size: number): string {
  const base = JSON.stringify(characterCard({ name: 'Big', description: '' }));
  return JSON.stringify(characterCard({ name: 'Big', description: 'd'.repeat(size - base.length) }));
}

/**
 * `POST /import/character` (spec 3 "Imports"): every card format and fixture, JSON and PNG (base64 or
 * upload), round trips through export, create_session, the 200 KiB and 5 MiB limits, every error code,
 * and one transaction for the character and its session.
 */
describe('Character import', () => {
  let t: TestApp;
  let owner: Caller;
  let side: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Importer' });
    side = await createClientCaller(t, owner.accountId, 'Side client');
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/import/character')
      .set('x-api-key', key)
      .send(body as object);
  const upload = (
    file: Buffer,
    fields: Record<string, string> = {},
    name = 'card.png',
    key = owner.apiKey,
  ) => {
    let req = t.http.post('/import/character').set('x-api-key', key);
    for (const [field, value] of Object.entries(fields)) req = req.field(field, value);
    return req.attach('file', file, name);
  };
  const exportCard = (id: string, format: 'v2' | 'v3', key = owner.apiKey) =>
    t.http.get(`/export/character/${id}?format=${format}`).set('x-api-key', key);
  const characterCount = async () =>
    (
      await charactersRepository.list(t.resources.database.db, owner.accountId, {
        sortBy: 'created_at',
        sortOrder: 'asc',
        limit: 200,
        offset: 0,
      })
    ).total;
  const logs = () =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId: owner.accountId, filters: {} },
      { limit: 10000, offset: 0, sortOrder: 'asc' },
    );

  describe('round trips', () => {
    it('has the character fixtures', () => {
      expect(JSON_CARDS.length).toBeGreaterThanOrEqual(3);
      expect(PNG_CARDS.length).toBeGreaterThanOrEqual(1);
    });

    it.each(JSON_CARDS)('%s imports and exports back, in v2 and v3, field by field', async (file) => {
      const original = readJsonFixture('characters', file);
      const res = await post({ payload: original, create_session: false });
      expect(res.status).toBe(201);
      const id = res.body.data.character_id as string;
      const own = original.spec === 'chara_card_v3' ? 'v3' : 'v2';
      const ownExport = await exportCard(id, own);
      expect(ownExport.status).toBe(200);
      expectFieldEquivalent(ownExport.body, original);
      for (const format of ['v2', 'v3'] as const) {
        const out = await exportCard(id, format);
        expect(out.status).toBe(200);
        expect(out.headers['content-type']).toBe('application/json; charset=utf-8');
        expectFieldEquivalent(out.body, exportCharacterCard(parseCharacterCard(original), format));
        // Nothing of the card's data is lost in the other format (v3 only adds group_only_greetings).
        const { group_only_greetings: _g, ...data } = out.body.data as JsonObject;
        const { group_only_greetings: _o, ...originalData } = original.data as JsonObject;
        expectFieldEquivalent(data, originalData);
      }
    });

    it.each(PNG_CARDS)('%s uploaded as a file exports its embedded card back', async (file) => {
      const png = readFixture('characters', file);
      const embedded = readPngCard(png).card as JsonObject;
      const res = await upload(png, { create_session: 'false' }, file);
      expect(res.status).toBe(201);
      expect(res.body.data.character.source_format).toBe('png');
      const own = embedded.spec === 'chara_card_v3' ? 'v3' : 'v2';
      const out = await exportCard(res.body.data.character_id, own);
      expect(out.status).toBe(200);
      expectFieldEquivalent(out.body, embedded);
      const v3 = await exportCard(res.body.data.character_id, 'v3');
      expectFieldEquivalent(v3.body, exportCharacterCard(parseCharacterCard(embedded), 'v3'));
    });

    it.each(PNG_CARDS)('%s sent as png_base64 imports the same card', async (file) => {
      const png = readFixture('characters', file);
      const embedded = readPngCard(png).card as JsonObject;
      const res = await post({ png_base64: png.toString('base64'), create_session: false });
      expect(res.status).toBe(201);
      const version = await t.http
        .get(`/characters/${res.body.data.character_id}/versions/${res.body.data.character_version_id}`)
        .set('x-api-key', owner.apiKey);
      expect(version.body.data.source_format).toBe('png');
      expect(version.body.data.change_kind).toBe('import');
      const out = await exportCard(res.body.data.character_id, 'v2');
      expectFieldEquivalent(out.body, exportCharacterCard(parseCharacterCard(embedded), 'v2'));
    });

    it('a JSON card file uploaded through multipart imports too', async () => {
      const file = readFixture('characters', 'FluxTheCat.chara_card_v2.json');
      const res = await upload(file, { create_session: 'false' }, 'flux.json');
      expect(res.status).toBe(201);
      expect(res.body.data.character.source_format).toBe('chara_card_v2');
      expectFieldEquivalent(
        (await exportCard(res.body.data.character_id, 'v2')).body,
        JSON.parse(String(file)),
      );
    });

    it('a legacy flat card keeps its top-level fields and becomes a v2 envelope', async () => {
      const legacy = {
        name: 'Old One',
        description: '{{char}} waits for {{user}}.',
        personality: 'patient',
        scenario: 'a tower',
        first_mes: 'Hello, {{user}}.',
        mes_example: '<START>',
        creatorcomment: 'legacy notes',
        tags: 'old, legacy',
        talkativeness: 0.3,
        chat: 'Old One - 1',
        odd_field: { kept: [1, 2] },
      };
      const res = await post({ payload: legacy, create_session: false });
      expect(res.status).toBe(201);
      expect(res.body.data.character).toMatchObject({ name: 'Old One', source_format: 'legacy' });
      const out = await exportCard(res.body.data.character_id, 'v2');
      expect(out.body).toMatchObject({ ...legacy, spec: 'chara_card_v2', spec_version: '2.0' });
      expect(out.body.data).toMatchObject({
        creator_notes: 'legacy notes',
        tags: ['old', 'legacy'],
        extensions: { talkativeness: 0.3, fav: false },
      });
    });

    it('never expands macros and keeps unknown fields at every level', async () => {
      const payload = {
        spec: 'chara_card_v3',
        spec_version: '3.0',
        top_level_extra: 'kept',
        data: {
          name: 'Macro {{char}}',
          description: '{{user}} meets {{char}} at {{time}}; {{random:a,b}}',
          first_mes: '{{// comment}}Hi {{user}}',
          extensions: {
            depth_prompt: { prompt: '{{char}} is here', depth: 4 },
            vendor: { x: [1, { y: null }] },
          },
          unknown_data_field: { nested: true },
          nickname: 'Nick',
        },
      };
      const res = await post({ payload, create_session: false });
      expect(res.status).toBe(201);
      const detail = await t.http
        .get(`/characters/${res.body.data.character_id}`)
        .set('x-api-key', owner.apiKey);
      expect(detail.body.data.data.description).toBe(payload.data.description);
      expect(detail.body.data.name).toBe('Macro {{char}}');
      const out = await exportCard(res.body.data.character_id, 'v3');
      expect(out.body.top_level_extra).toBe('kept');
      expect(out.body.data).toMatchObject(payload.data);
      expect(out.headers['content-disposition']).toBe('attachment; filename="Macro {{char}}.json"');
    });
  });

  describe('create_session', () => {
    it('defaults to true: a session pinned to the new version, titled after the character', async () => {
      const payload = characterCard({ name: 'Session Maker', creator: 'me', tags: ['a'] });
      const res = await post({ payload });
      expect(res.status).toBe(201);
      const data = res.body.data;
      expect(data).toEqual({
        create_session: true,
        character: {
          id: expect.stringMatching(/^chr_/),
          name: 'Session Maker',
          source: 'ext_frontend',
          source_format: 'chara_card_v2',
          version_no: 1,
          latest_version_id: expect.stringMatching(/^chrv_/),
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
        session: {
          id: expect.stringMatching(/^ses_/),
          title: 'Session Maker',
          status: 'active',
          character_binding: {
            character_id: data.character.id,
            character_version_id: data.character.latest_version_id,
            sync_policy: 'pin',
            snapshot_summary: {
              name: 'Session Maker',
              creator: 'me',
              character_version: '',
              tags: ['a'],
              source_format: 'chara_card_v2',
            },
          },
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
        warnings: [],
      });
      const session = await t.http.get(`/sessions/${data.session.id}`).set('x-api-key', owner.apiKey);
      expect(session.status).toBe(200);
      expect(session.body.data).toMatchObject({
        character_id: data.character.id,
        character_version_id: data.character.latest_version_id,
        title: 'Session Maker',
      });
      const actions = (await logs()).filter(
        (l) => l.target_id === data.character.id || l.target_id === data.session.id,
      );
      expect(actions.map((l) => l.action)).toEqual(['import_character', 'create_session']);
      expect(actions[0]).toMatchObject({
        target_type: 'character',
        after_ref: {
          id: data.character.id,
          name: 'Session Maker',
          version_no: 1,
          version_id: data.character.latest_version_id,
        },
      });
      const version = await assetVersionsRepository.findOfAsset(
        t.resources.database.db,
        data.character.id,
        data.character.latest_version_id,
      );
      expect(version).toMatchObject({
        asset_kind: 'character',
        version_no: 1,
        change_kind: 'import',
        source_format: 'chara_card_v2',
        created_by_operation_id: actions[0].id,
      });
    });

    it('uses the given title, also from a multipart form', async () => {
      const json = await post({ payload: characterCard({ name: 'Titled' }), title: 'My chat' });
      expect(json.status).toBe(201);
      expect(json.body.data.session.title).toBe('My chat');
      const png = readFixture('characters', PNG_CARDS[0]);
      const form = await upload(png, { create_session: 'true', title: 'Form chat' });
      expect(form.status).toBe(201);
      expect(form.body.data.session.title).toBe('Form chat');
      const noFlag = await upload(png, {});
      expect(noFlag.status).toBe(201);
      expect(noFlag.body.data.create_session).toBe(true);
    });

    it('false answers character_id and character_version_id and creates no session', async () => {
      const res = await post({ payload: characterCard({ name: 'Lonely' }), create_session: false });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        create_session: false,
        character: expect.objectContaining({ id: res.body.data.character_id, name: 'Lonely' }),
        character_id: expect.stringMatching(/^chr_/),
        character_version_id: res.body.data.character.latest_version_id,
        warnings: [],
      });
      const sessionLogs = (await logs()).filter(
        (l) =>
          l.action === 'create_session' &&
          (l.after_ref as JsonObject)?.character_id === res.body.data.character_id,
      );
      expect(sessionLogs).toHaveLength(0);
    });

    it('a non-default Client imports into the account library (create_session false)', async () => {
      const res = await post(
        { payload: characterCard({ name: 'By side' }), create_session: false },
        side.apiKey,
      );
      expect(res.status).toBe(201);
      const read = await t.http
        .get(`/characters/${res.body.data.character_id}`)
        .set('x-api-key', owner.apiKey);
      expect(read.status).toBe(200);
    });

    it('character and session are one transaction: a refused session leaves no character', async () => {
      const before = await characterCount();
      const logCount = (await logs()).length;
      // A non-default Client cannot create a session with its own Project (403): nothing is stored.
      const res = await post({ payload: characterCard({ name: 'Never stored' }) }, side.apiKey);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('project_access_denied');
      expect(await characterCount()).toBe(before);
      expect((await logs()).length).toBe(logCount);
    });

    it('warns about a newer V3 spec_version and still imports', async () => {
      const res = await post({
        payload: { spec: 'chara_card_v3', spec_version: '3.5', data: { name: 'Future' } },
        create_session: false,
      });
      expect(res.status).toBe(201);
      expect(res.body.data.warnings).toEqual([expect.stringContaining('3.5')]);
    });
  });

  describe('limits', () => {
    it('accepts a JSON body of exactly 200 KiB and answers 413 one byte over', async () => {
      const body = (size: number) => {
        const base = JSON.stringify({ payload: characterCard({ description: '' }), create_session: false });
        return JSON.stringify({
          payload: characterCard({ description: 'x'.repeat(size - base.length) }),
          create_session: false,
        });
      };
      const atLimit = body(MAX_BODY);
      expect(Buffer.byteLength(atLimit)).toBe(MAX_BODY);
      const ok = await t.http
        .post('/import/character')
        .set('x-api-key', owner.apiKey)
        .set('content-type', 'application/json')
        .send(atLimit);
      expect(ok.status).toBe(201);
      const before = await characterCount();
      const over = await t.http
        .post('/import/character')
        .set('x-api-key', owner.apiKey)
        .set('content-type', 'application/json')
        .send(body(MAX_BODY + 1));
      expect(over.status).toBe(413);
      expect(over.body.error).toEqual({
        code: 'import_payload_too_large',
        message: expect.stringContaining(String(MAX_BODY)),
        details: { byte_count: MAX_BODY + 1, max_bytes: MAX_BODY },
      });
      expect(await characterCount()).toBe(before);
    });

    it('answers 413 for a chunked JSON body over 200 KiB (no Content-Length)', async () => {
      const text = JSON.stringify({
        payload: characterCard({ description: 'y'.repeat(MAX_BODY) }),
        create_session: false,
      });
      const url = new URL('/import/character', t.baseUrl);
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          url,
          {
            method: 'POST',
            headers: {
              'x-api-key': owner.apiKey,
              'content-type': 'application/json',
              'transfer-encoding': 'chunked',
            },
          },
          (res) => {
            let data = '';
            res.on('data', (chunk) => (data += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
          },
        );
        req.on('error', reject);
        for (let i = 0; i < text.length; i += 50_000) req.write(text.slice(i, i + 50_000));
        req.end();
      });
      expect(status).toBe(413);
      expect(JSON.parse(body).error.code).toBe('import_payload_too_large');
    });

    it('answers 413 for a gzip-compressed JSON body over 200 KiB', async () => {
      const text = JSON.stringify({
        payload: characterCard({ description: 'z'.repeat(MAX_BODY) }),
        create_session: false,
      });
      const res = await fetch(new URL('/import/character', t.baseUrl), {
        method: 'POST',
        headers: {
          'x-api-key': owner.apiKey,
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        },
        body: gzipSync(text),
      });
      const body = (await res.json()) as { error: { code: string } };
      expect(body.error.code).toBe('import_payload_too_large');
      expect(res.status).toBe(413);
    });

    it('accepts a card of exactly 200 KiB inside a PNG and answers 413 one byte over', async () => {
      const image = readFixture('characters', PNG_CARDS[0]);
      const atLimit = writePngCard(image, { chara: cardTextOfSize(MAX_BODY) });
      const ok = await upload(atLimit, { create_session: 'false' });
      expect(ok.status).toBe(201);
      const base64 = await post({ png_base64: atLimit.toString('base64'), create_session: false });
      expect(base64.status).toBe(201);
      const over = writePngCard(image, { chara: cardTextOfSize(MAX_BODY + 1) });
      const before = await characterCount();
      for (const res of [
        await upload(over, { create_session: 'false' }),
        await post({ png_base64: over.toString('base64'), create_session: false }),
      ]) {
        expect(res.status).toBe(413);
        expect(res.body.error.code).toBe('import_payload_too_large');
        expect(res.body.error.details).toEqual({ byte_count: MAX_BODY + 1, max_bytes: MAX_BODY });
      }
      expect(await characterCount()).toBe(before);
    });

    it('accepts a PNG file of exactly 5 MiB and answers 413 one byte over', async () => {
      const image = readFixture('characters', PNG_CARDS[0]);
      const atLimit = pngOfSize(image, MAX_PNG);
      expect(atLimit.length).toBe(MAX_PNG);
      expect(readPngCard(atLimit).card).toEqual(readPngCard(image).card);
      expect((await upload(atLimit, { create_session: 'false' })).status).toBe(201);
      expect((await post({ png_base64: atLimit.toString('base64'), create_session: false })).status).toBe(
        201,
      );
      const over = pngOfSize(image, MAX_PNG + 1);
      const before = await characterCount();
      const uploaded = await upload(over, { create_session: 'false' });
      expect(uploaded.status).toBe(413);
      expect(uploaded.body.error.code).toBe('import_payload_too_large');
      const sent = await post({ png_base64: over.toString('base64'), create_session: false });
      expect(sent.status).toBe(413);
      expect(sent.body.error).toMatchObject({
        code: 'import_payload_too_large',
        details: { byte_count: MAX_PNG + 1, max_bytes: MAX_PNG },
      });
      expect(await characterCount()).toBe(before);
    });
  });

  describe('bad input', () => {
    const expectNothingStored = async (fn: () => Promise<void>) => {
      const before = await characterCount();
      await fn();
      expect(await characterCount()).toBe(before);
    };

    it.each([
      ['no card at all', { create_session: false }, /exactly one card/],
      [
        'payload and png_base64 together',
        { payload: characterCard(), png_base64: 'iVBORw0K' },
        /exactly one/,
      ],
      ['payload that is an array', { payload: [characterCard()] }, /payload/],
      ['payload that is a string', { payload: 'card' }, /payload/],
      [
        'create_session that is a string',
        { payload: characterCard(), create_session: 'false' },
        /create_session/,
      ],
      ['an empty title', { payload: characterCard(), title: '' }, /title/],
      ['a blank title', { payload: characterCard(), title: '   ' }, /title/],
      ['an unknown field', { payload: characterCard(), project: 'x' }, /project/],
      ['png_base64 that is not base64', { png_base64: 'not base64!' }, /base64/],
    ])('%s: 400 validation_error', async (_name, body, message) => {
      await expectNothingStored(async () => {
        const res = await post(body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.message).toMatch(message);
      });
    });

    it('malformed JSON: 400 validation_error', async () => {
      const res = await t.http
        .post('/import/character')
        .set('x-api-key', owner.apiKey)
        .set('content-type', 'application/json')
        .send('{"payload": {');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it.each([
      ['a card without spec or name', { description: 'who?' }, /not a character card/],
      ['an unknown spec', { spec: 'chara_card_v9', data: { name: 'x' } }, /unsupported character card spec/],
      ['a v2 card without data', { spec: 'chara_card_v2', spec_version: '2.0' }, /data object/],
      [
        'a name that is a number',
        { spec: 'chara_card_v2', data: { name: 5 } },
        /data\.name must be a string/,
      ],
      ['tags that are a string', { spec: 'chara_card_v2', data: { name: 'x', tags: 'a,b' } }, /data\.tags/],
      [
        'a character_book whose entries are not an array',
        { spec: 'chara_card_v3', data: { name: 'x', character_book: { entries: {} } } },
        /character_book\.entries must be an array/,
      ],
      [
        'a character_book entry that is not an object',
        { spec: 'chara_card_v3', data: { name: 'x', character_book: { entries: ['nope'] } } },
        /character_book\.entries\[0\]/,
      ],
    ])('%s: 400 import_parse_error naming the problem', async (_name, payload, message) => {
      await expectNothingStored(async () => {
        const res = await post({ payload, create_session: false });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('import_parse_error');
        expect(res.body.error.message).toMatch(message);
      });
    });

    it('a PNG without a card chunk: 400 import_parse_error, uploaded or in base64', async () => {
      const image = readFixture('characters', PNG_CARDS[0]);
      const bare = writePngCard(image, {});
      await expectNothingStored(async () => {
        for (const res of [
          await upload(bare, { create_session: 'false' }),
          await post({ png_base64: bare.toString('base64'), create_session: false }),
        ]) {
          expect(res.status).toBe(400);
          expect(res.body.error.code).toBe('import_parse_error');
          expect(res.body.error.message).toMatch(/no character card/);
        }
      });
    });

    it('a corrupt PNG, base64 that is not a PNG, and a file that is neither: 400 import_parse_error', async () => {
      const image = readFixture('characters', PNG_CARDS[0]);
      const corrupt = Buffer.from(image);
      corrupt[40] ^= 0xff;
      await expectNothingStored(async () => {
        const cases: Array<
          [PromiseLike<{ status: number; body: { error: { code: string; message: string } } }>, RegExp]
        > = [
          [upload(corrupt, { create_session: 'false' }), /PNG corrupt|CRC/],
          [post({ png_base64: Buffer.from('{"name":"x"}').toString('base64') }), /not a PNG/],
          [upload(Buffer.from('hello, not a card'), { create_session: 'false' }, 'x.txt'), /not valid JSON/],
          [upload(image.subarray(0, 100), { create_session: 'false' }), /truncated/],
        ];
        for (const [pending, message] of cases) {
          const res = await pending;
          expect(res.status).toBe(400);
          expect(res.body.error.code).toBe('import_parse_error');
          expect(res.body.error.message).toMatch(message);
        }
      });
    });

    it('multipart with another file field, a bad create_session, or no file: 400 validation_error', async () => {
      const png = readFixture('characters', PNG_CARDS[0]);
      await expectNothingStored(async () => {
        const wrongField = await t.http
          .post('/import/character')
          .set('x-api-key', owner.apiKey)
          .attach('image', png, 'card.png');
        expect(wrongField.status).toBe(400);
        expect(wrongField.body.error.code).toBe('validation_error');
        const badFlag = await upload(png, { create_session: 'yes' });
        expect(badFlag.status).toBe(400);
        expect(badFlag.body.error.code).toBe('validation_error');
        expect(badFlag.body.error.message).toMatch(/create_session/);
        const noFile = await t.http
          .post('/import/character')
          .set('x-api-key', owner.apiKey)
          .field('create_session', 'false');
        expect(noFile.status).toBe(400);
        expect(noFile.body.error.code).toBe('validation_error');
      });
    });
  });

  it('project_id is not part of the import body', async () => {
    const res = await post({ payload: characterCard(), project_id: 'prj_anything' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('the import factory works for other suites', async () => {
    const imported = await importCharacter(t, { apiKey: owner.apiKey });
    expect(imported.id).toMatch(/^chr_/);
    expect(imported.versionId).toMatch(/^chrv_/);
  });
});
