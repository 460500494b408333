import { WorldbookJournal } from '@hearth/app';
import { WORLDBOOK_IMPORT_MAX_ENTRIES, WORLDBOOK_UID_MAX } from '@hearth/domain';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import {
  accountLogs,
  countWorldbookRows,
  generateWorldbook,
  importWorldbook,
  readWorldbookFixture,
  worldbookEntryRows,
} from '../support/factories/worldbooks';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Spec 3 worldbooks (docs/decisions.md "Worldbooks"): import, detail, PUT with optimistic concurrency,
 * DELETE idempotency, export, and raw data and normalised entries never drifting apart.
 */
describe('Worldbooks', () => {
  let t: TestApp;
  let owner: Caller;
  let side: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    side = await createClientCaller(t, owner.accountId, 'Side client');
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key = owner.apiKey) => t.http.get(path).set('x-api-key', key);
  const put = (id: string, body: object, key = owner.apiKey) =>
    t.http.put(`/worldbooks/${id}`).set('x-api-key', key).send(body);
  const importBody = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/import/worldbook')
      .set('x-api-key', key)
      .send(body as object);

  describe('import and export', () => {
    it.each(['Eldoria.st-1.12.6.json', 'Eldoria.st-1.18.0.json'])(
      '%s imports and exports back field by field (plus the name)',
      async (file) => {
        const original = readWorldbookFixture(file);
        const res = await importBody({ data: original });
        expect(res.status).toBe(201);
        expect(res.body.data).toEqual({
          id: expect.stringMatching(/^wb_/),
          name: 'Unnamed Worldbook',
          source: 'ext_frontend',
          version: 1,
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
          entry_count: Object.keys(original.entries as object).length,
        });
        const exported = await get(`/export/worldbook/${res.body.data.id}`);
        expect(exported.status).toBe(200);
        expect(exported.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(exported.headers['content-disposition']).toBe('attachment; filename="Unnamed Worldbook.json"');
        const body = JSON.parse(exported.text) as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual(['entries', 'name']);
        expect(body.name).toBe('Unnamed Worldbook');
        const originalEntries = original.entries as Record<string, Record<string, unknown>>;
        const exportedEntries = body.entries as Record<string, Record<string, unknown>>;
        expect(Object.keys(exportedEntries)).toEqual(Object.keys(originalEntries));
        for (const uid of Object.keys(originalEntries)) {
          const a = exportedEntries[uid];
          const e = originalEntries[uid];
          expect({ uid, keys: Object.keys(a).sort() }).toEqual({ uid, keys: Object.keys(e).sort() });
          for (const field of Object.keys(e)) {
            expect({ uid, field, value: a[field] }).toStrictEqual({ uid, field, value: e[field] });
          }
        }
        // Macros stay text.
        expect(JSON.stringify(body)).toContain('{{user}}');
      },
    );

    it('takes the body name, else the file name, else Unnamed Worldbook', async () => {
      const data = generateWorldbook(2, { name: 'From file' });
      expect((await importBody({ data, name: 'From body' })).body.data.name).toBe('From body');
      expect((await importBody({ data })).body.data.name).toBe('From file');
      expect((await importBody({ data: generateWorldbook(1) })).body.data.name).toBe('Unnamed Worldbook');
    });

    it('accepts entries as an array and in the card-embedded form, keeping unknown fields', async () => {
      const arrayBook = await importBody({
        data: {
          extensions: { custom: 1 },
          recursive: true,
          entries: [
            { key: ['a'], content: 'A', mystery: { deep: [1, 2] } },
            { uid: 7, key: ['b'], content: 'B' },
          ],
        },
      });
      expect(arrayBook.status).toBe(201);
      const exported = JSON.parse((await get(`/export/worldbook/${arrayBook.body.data.id}`)).text);
      expect(exported.extensions).toEqual({ custom: 1 });
      expect(exported.recursive).toBe(true);
      expect(Object.keys(exported.entries)).toEqual(['0', '7']);
      expect(exported.entries['0']).toMatchObject({ uid: 0, key: ['a'], mystery: { deep: [1, 2] } });

      const card = {
        spec: 'chara_card_v2',
        data: {
          name: 'Card',
          character_book: {
            name: 'Card book',
            entries: [
              {
                keys: ['moon'],
                content: 'The moon {{char}}',
                enabled: false,
                insertion_order: 5,
                extensions: { depth: 2 },
              },
            ],
          },
        },
      };
      const cardBook = await importBody({ data: card });
      expect(cardBook.status).toBe(201);
      expect(cardBook.body.data.name).toBe('Card book');
      const entries = await get(`/worldbooks/${cardBook.body.data.id}/entries`);
      expect(entries.body.data).toHaveLength(1);
      expect(entries.body.data[0]).toMatchObject({
        keys: ['moon'],
        content: 'The moon {{char}}',
        disable: true,
        order: 5,
        depth: 2,
      });
      const bookOnly = await importBody({ data: card.data.character_book });
      expect(bookOnly.status).toBe(201);
      expect(bookOnly.body.data.entry_count).toBe(1);
    });

    it.each([
      [{ entries: 'nope' }, /entries must be an object keyed by uid or an array/],
      [{ entries: 5 }, /entries must be an object keyed by uid or an array/],
      [{ name: 'no entries' }, /entries are missing/],
      [{ entries: { '1': 'text' } }, /entries\.1 must be an object/],
      [{ entries: { '1': { key: 5 } } }, /key must be an array of strings/],
      [
        {
          entries: [
            { uid: 1, key: [] },
            { uid: 1, key: [] },
          ],
        },
        /duplicate worldbook entry uid 1/,
      ],
    ])(
      'refuses unparseable data %j with 400 import_parse_error naming it, storing nothing',
      async (data, message) => {
        const before = await countWorldbookRows(t, owner.accountId);
        const res = await importBody({ data });
        expect([res.status, res.body.error.code]).toEqual([400, 'import_parse_error']);
        expect(res.body.error.message).toMatch(message);
        expect(await countWorldbookRows(t, owner.accountId)).toEqual(before);
      },
    );

    it.each([
      [{}, 'data'],
      [{ data: [] }, 'data'],
      [{ data: 'text' }, 'data'],
      [{ data: {}, name: '' }, 'name'],
      [{ data: {}, name: 5 }, 'name'],
      [{ data: {}, extra: true }, 'extra'],
    ])('refuses a bad body %j with 400 validation_error naming %s', async (body, field) => {
      const res = await importBody(body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('rolls back a failed import whole (a NUL character in the last of 1,500 entries)', async () => {
      const data = generateWorldbook(1500);
      (data.entries as Record<string, Record<string, unknown>>)['1499'].content = 'bad \u0000 text';
      const before = await countWorldbookRows(t, owner.accountId);
      const res = await importBody({ data });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(await countWorldbookRows(t, owner.accountId)).toEqual(before);
    });

    it('logs import_worldbook with essentials only and a first version', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(3), 'Logged');
      const log = (await accountLogs(t, owner.accountId)).find((l) => l.target_id === book.id);
      expect(log).toMatchObject({ action: 'import_worldbook', target_type: 'worldbook' });
      expect(log?.after_ref).toEqual({
        id: book.id,
        name: 'Logged',
        version_no: 1,
        version_id: expect.stringMatching(/^wbv_/),
      });
      expect(JSON.stringify(log)).not.toContain('Entry 0');
      const versions = await get(`/worldbooks/${book.id}/versions`);
      expect(versions.body.data).toEqual([
        {
          id: (log?.after_ref as { version_id: string }).version_id,
          worldbook_id: book.id,
          version_no: 1,
          name: 'Logged',
          change_kind: 'import',
          source_format: 'st_world',
          created_by_operation_id: log?.id,
          created_at: expect.any(Number),
        },
      ]);
    });

    it('names a non-ASCII export with filename* and escapes quotes', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'Ëlf "lore"');
      const res = await get(`/export/worldbook/${book.id}`);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="_lf \\"lore\\".json"; filename*=UTF-8''%C3%8Blf%20%22lore%22.json`,
      );
      expect((await get('/export/worldbook/wb_missing')).body.error.code).toBe('not_found');
    });
  });

  describe('list and detail', () => {
    it('lists summaries with paging meta, q and sorting', async () => {
      const a = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'Zeta Atlas');
      const b = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'alpha atlas');
      const res = await get('/worldbooks?q=ATLAS&sort_by=name&sort_order=asc');
      expect(res.status).toBe(200);
      expect(res.body.data.map((w: { id: string }) => w.id)).toEqual([b.id, a.id]);
      expect(res.body.data[0]).toEqual({
        id: b.id,
        name: 'alpha atlas',
        source: 'ext_frontend',
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
        version: 1,
      });
      expect(res.body.meta).toEqual({
        total: 2,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'name',
        sort_order: 'asc',
      });
      const paged = await get('/worldbooks?limit=1&offset=0');
      expect(paged.body.data).toHaveLength(1);
      expect(paged.body.meta.has_more).toBe(true);
      expect((await get('/worldbooks?limit=200')).status).toBe(200);
    });

    it.each(['limit=201', 'limit=0', 'offset=-1', 'sort_by=uid', 'sort_order=up', 'limit=abc', 'other=1'])(
      'refuses ?%s with 400 validation_error',
      async (query) => {
        const res = await get(`/worldbooks?${query}`);
        expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      },
    );

    it('shows data in raw field names: entries as an array with uid, and the global fields', async () => {
      const book = await importWorldbook(
        t,
        owner.apiKey,
        readWorldbookFixture('Eldoria.st-1.12.6.json'),
        'Eld',
      );
      const res = await get(`/worldbooks/${book.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: book.id, name: 'Eld', source: 'ext_frontend', version: 1 });
      const data = res.body.data.data;
      expect(data).toMatchObject({
        name: 'Eld',
        scanDepth: null,
        caseSensitive: null,
        matchWholeWords: null,
        recursive: null,
        maxRecursionSteps: null,
      });
      expect(Array.isArray(data.entries)).toBe(true);
      expect(data.entries.map((e: { uid: number }) => e.uid)).toEqual([0, 1, 2, 3]);
      for (const field of [
        'uid',
        'key',
        'keysecondary',
        'selective',
        'selectiveLogic',
        'constant',
        'content',
        'comment',
        'position',
        'order',
        'depth',
        'role',
        'disable',
        'scanDepth',
        'caseSensitive',
        'matchWholeWords',
      ])
        expect(data.entries[0]).toHaveProperty(field);
      expect((await get('/worldbooks/wb_missing')).body.error.code).toBe('worldbook_not_found');
      // Another Client of the same account reads it too.
      expect((await get(`/worldbooks/${book.id}`, side.apiKey)).status).toBe(200);
    });
  });

  describe('PUT', () => {
    it('replaces name, global fields and entries; entry ids stay for kept uids; version +1', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(3), 'Before');
      const rowsBefore = await worldbookEntryRows(t, book.id);
      const detail = (await get(`/worldbooks/${book.id}`)).body.data;
      const entries = detail.data.entries.filter((e: { uid: number }) => e.uid !== 2);
      entries[0].content = 'Changed through data';
      entries.push({ uid: 9, key: ['new'], content: 'New entry', extraField: 'kept' });
      const res = await put(book.id, {
        name: 'After',
        data: { ...detail.data, entries, scanDepth: 3, recursive: true },
        expected_version: 1,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        id: book.id,
        name: 'After',
        source: 'ext_frontend',
        created_at: book.updated_at,
        updated_at: expect.any(Number),
        version: 2,
      });
      expect(res.body.data.updated_at).toBeGreaterThan(book.updated_at);
      const rows = await worldbookEntryRows(t, book.id);
      expect(rows.map((r) => r.uid)).toEqual([0, 1, 9]);
      expect(rows[0].id).toBe(rowsBefore[0].id);
      expect(rows[1].id).toBe(rowsBefore[1].id);
      // Normalised view shows the raw write.
      const entry = await get(`/worldbooks/${book.id}/entries/${rows[0].id}`);
      expect(entry.body.data.content).toBe('Changed through data');
      const exported = JSON.parse((await get(`/export/worldbook/${book.id}`)).text);
      expect(exported).toMatchObject({ name: 'After', scanDepth: 3, recursive: true });
      expect(exported.entries['9']).toMatchObject({ key: ['new'], content: 'New entry', extraField: 'kept' });
      expect(exported).not.toHaveProperty('caseSensitive');
      const log = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === book.id).pop();
      expect(log).toMatchObject({ action: 'update_worldbook', target_type: 'worldbook' });
      expect(log?.before_ref).toEqual({ id: book.id, name: 'Before', version_no: 1 });
    });

    it("a file's name past 200 characters is cut to 200, so the book saves back as read", async () => {
      const long = `${'Ä'.repeat(150)}${'😀'.repeat(150)}`;
      const res = await importBody({
        data: { ...readWorldbookFixture('Eldoria.st-1.12.6.json'), name: long },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.name).toBe(`${'Ä'.repeat(150)}${'😀'.repeat(50)}`);
      const detail = (await get(`/worldbooks/${res.body.data.id}`)).body.data;
      const saved = await put(res.body.data.id, {
        name: detail.name,
        data: detail.data,
        expected_version: 1,
      });
      expect(saved.status).toBe(200);
    });

    it('a PUT of the detail data as read rewrites no entry and leaves the export as it was', async () => {
      const original = readWorldbookFixture('Eldoria.st-1.12.6.json');
      const book = await importWorldbook(t, owner.apiKey, original, 'Round trip');
      const rowsBefore = await worldbookEntryRows(t, book.id);
      const detail = (await get(`/worldbooks/${book.id}`)).body.data;
      const res = await put(book.id, { name: 'Round trip 2', data: detail.data, expected_version: 1 });
      expect([res.status, res.body.data.version]).toEqual([200, 2]);
      expect(await worldbookEntryRows(t, book.id)).toEqual(rowsBefore);
      const exported = JSON.parse((await get(`/export/worldbook/${book.id}`)).text);
      expect(exported).toEqual({ ...original, name: 'Round trip 2' });
    });

    it('accepts the legacy expected_updated_at and refuses a mismatching one', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
      const data = generateWorldbook(2);
      const stale = await put(book.id, { name: 'x', data, expected_updated_at: book.updated_at - 1 });
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const ok = await put(book.id, { name: 'x', data, expected_updated_at: book.updated_at }, side.apiKey);
      expect([ok.status, ok.body.data.version]).toEqual([200, 2]);
    });

    it('answers 409 worldbook_conflict for a stale expected_version and changes nothing', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2), 'Kept');
      const res = await put(book.id, { name: 'Lost', data: generateWorldbook(5), expected_version: 7 });
      expect([res.status, res.body.error.code]).toEqual([409, 'worldbook_conflict']);
      expect(res.body.error.details).toEqual({ current_version: 1, current_updated_at: book.updated_at });
      expect((await get(`/worldbooks/${book.id}`)).body.data).toMatchObject({ name: 'Kept', version: 1 });
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(2);
    });

    it.each([
      [{ name: 'n', data: {} }, 'expected_version'],
      [{ data: {}, expected_version: 1 }, 'name'],
      [{ name: '', data: {}, expected_version: 1 }, 'name'],
      [{ name: 'n', expected_version: 1 }, 'data'],
      [{ name: 'n', data: [], expected_version: 1 }, 'data'],
      [{ name: 'n', data: {}, expected_version: 'one' }, 'expected_version'],
      [{ name: 'n', data: {}, expected_version: 1.5 }, 'expected_version'],
      [{ name: 'n', data: {}, expected_updated_at: 'x' }, 'expected_updated_at'],
    ])('refuses %j with 400 validation_error naming %s', async (body, field) => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
      const res = await put(book.id, body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it.each([
      [{ entries: 'x' }, /entries must be an object keyed by uid or an array/],
      [{}, /entries must be an object keyed by uid or an array/],
      [{ entries: [{ key: [], position: 8 }] }, /position must be an integer 0-7/],
      [{ entries: [{ key: [], role: 3 }] }, /role must be an integer 0-2/],
      [{ entries: [{ key: [], selectiveLogic: 9 }] }, /selectiveLogic must be an integer 0-3/],
      [{ entries: [{ key: [], order: 1.5 }] }, /order must be an integer/],
      [{ entries: [{ key: [], content: 5 }] }, /content must be a string/],
      [{ entries: [], scanDepth: 'deep' }, /scanDepth must be a non-negative integer or null/],
      [{ entries: [], recursive: 1 }, /recursive must be a boolean or null/],
    ])(
      'refuses invalid data %j with 400 worldbook_validation_error, changing nothing',
      async (data, message) => {
        const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2), 'Stable');
        const res = await put(book.id, { name: 'Changed', data, expected_version: 1 });
        expect([res.status, res.body.error.code]).toEqual([400, 'worldbook_validation_error']);
        expect(res.body.error.message).toMatch(message);
        expect((await get(`/worldbooks/${book.id}`)).body.data).toMatchObject({ name: 'Stable', version: 1 });
        expect(await worldbookEntryRows(t, book.id)).toHaveLength(2);
      },
    );

    it('answers 404 worldbook_not_found for a missing book', async () => {
      const res = await put('wb_missing', { name: 'n', data: { entries: {} }, expected_version: 1 });
      expect([res.status, res.body.error.code]).toEqual([404, 'worldbook_not_found']);
    });

    it('rolls back a PUT that fails in the database (a NUL in the last of 1,500 entries)', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(3), 'Atomic');
      const data = generateWorldbook(1500);
      (data.entries as Record<string, Record<string, unknown>>)['1499'].comment = 'bad \u0000';
      const res = await put(book.id, { name: 'Broken', data, expected_version: 1 });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect((await get(`/worldbooks/${book.id}`)).body.data).toMatchObject({ name: 'Atomic', version: 1 });
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(3);
      expect((await get(`/worldbooks/${book.id}/versions`)).body.meta.total).toBe(1);
    });

    it('20 parallel PUTs with the same expected_version: one 200, nineteen 409, the winner stored', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(5), 'Race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          put(book.id, { name: `Writer ${i}`, data: generateWorldbook(i + 1), expected_version: 1 }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const r of results.filter((x) => x.status === 409))
        expect(r.body.error.code).toBe('worldbook_conflict');
      const winner = results.findIndex((r) => r.status === 200);
      const stored = (await get(`/worldbooks/${book.id}`)).body.data;
      expect(stored).toMatchObject({ name: `Writer ${winner}`, version: 2 });
      expect(stored.data.entries).toHaveLength(winner + 1);
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(winner + 1);
    });
  });

  describe('a busy book', () => {
    it('answers 503 resource_busy when the row lock is not granted in time, and writes nothing', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2), 'Busy');
      const journal = t.app.get(WorldbookJournal, { strict: false });
      const saved = journal.lockTimeoutMs;
      journal.lockTimeoutMs = 150;
      let release!: () => void;
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = t.resources.database.db.transaction().execute(async (tx) => {
        await tx.selectFrom('worldbooks').select('id').where('id', '=', book.id).forUpdate().execute();
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      });
      try {
        await isLocked;
        const res = await put(book.id, { name: 'Blocked', data: generateWorldbook(1), expected_version: 1 });
        expect([res.status, res.body.error.code]).toEqual([503, 'resource_busy']);
        const entry = await t.http
          .post(`/worldbooks/${book.id}/entries`)
          .set('x-api-key', owner.apiKey)
          .send({ keys: [], content: 'x' });
        expect([entry.status, entry.body.error.code]).toEqual([503, 'resource_busy']);
      } finally {
        release();
        await holder;
        journal.lockTimeoutMs = saved;
      }
      expect((await get(`/worldbooks/${book.id}`)).body.data).toMatchObject({ name: 'Busy', version: 1 });
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(2);
    });
  });

  describe('the import bounds hold for PUT and for entries added one by one', () => {
    const entryCount = async (id: string) =>
      Number(
        (
          await t.resources.database.db
            .selectFrom('worldbook_entries')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('worldbook_id', '=', id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const addEntry = (id: string) =>
      t.http
        .post(`/worldbooks/${id}/entries`)
        .set('x-api-key', owner.apiKey)
        .send({ keys: ['k'], content: 'x' });

    it(`PUT takes at most ${WORLDBOOK_IMPORT_MAX_ENTRIES} entries; a full book refuses a new entry`, async () => {
      // Built once: 20,001 minimal entries (uid = index).
      const entries = Array.from({ length: WORLDBOOK_IMPORT_MAX_ENTRIES + 1 }, () => ({ key: [] }));
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2), 'Bounded');
      const past = await put(book.id, { name: 'Too many', data: { entries }, expected_version: 1 });
      expect([past.status, past.body.error.code]).toEqual([400, 'worldbook_validation_error']);
      expect(past.body.error.message).toMatch(`more than ${WORLDBOOK_IMPORT_MAX_ENTRIES} entries`);
      expect((await get(`/worldbooks/${book.id}`)).body.data).toMatchObject({ name: 'Bounded', version: 1 });
      expect(await entryCount(book.id)).toBe(2);

      entries.pop();
      const at = await put(book.id, { name: 'Full', data: { entries }, expected_version: 1 });
      expect([at.status, at.body.data.version]).toEqual([200, 2]);
      expect(await entryCount(book.id)).toBe(WORLDBOOK_IMPORT_MAX_ENTRIES);

      const more = await addEntry(book.id);
      expect([more.status, more.body.error.code]).toEqual([400, 'worldbook_validation_error']);
      expect(more.body.error.message).toMatch(`at most ${WORLDBOOK_IMPORT_MAX_ENTRIES}`);
      expect(await entryCount(book.id)).toBe(WORLDBOOK_IMPORT_MAX_ENTRIES);
      expect((await get(`/worldbooks/${book.id}`)).body.data.version).toBe(2);
    }, 60_000);

    it(`PUT takes uids up to ${WORLDBOOK_UID_MAX} (the stored integer); a new entry past the top uid is 400, not 500`, async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'Top uid');
      const entry = (uid: number) => ({ entries: { [String(uid)]: { uid, key: ['top'], content: 'top' } } });
      const past = await put(book.id, {
        name: 'Past',
        data: entry(WORLDBOOK_UID_MAX + 1),
        expected_version: 1,
      });
      expect([past.status, past.body.error.code]).toEqual([400, 'worldbook_validation_error']);
      expect(past.body.error.message).toMatch(`above ${WORLDBOOK_UID_MAX}`);
      expect(await entryCount(book.id)).toBe(1);

      const at = await put(book.id, { name: 'At', data: entry(WORLDBOOK_UID_MAX), expected_version: 1 });
      expect(at.status).toBe(200);
      expect((await worldbookEntryRows(t, book.id)).map((r) => r.uid)).toEqual([WORLDBOOK_UID_MAX]);

      const next = await addEntry(book.id);
      expect([next.status, next.body.error.code]).toEqual([400, 'worldbook_validation_error']);
      expect(next.body.error.message).toMatch(`uid ${WORLDBOOK_UID_MAX + 1} is above`);
      expect(await entryCount(book.id)).toBe(1);
    });
  });

  describe('DELETE', () => {
    it('without expected_version is unconditional and idempotent; entries cascade; versions stay', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(4));
      const res = await t.http.delete(`/worldbooks/${book.id}`).set('x-api-key', owner.apiKey);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(0);
      expect((await get(`/worldbooks/${book.id}`)).status).toBe(404);
      expect((await t.http.delete(`/worldbooks/${book.id}`).set('x-api-key', owner.apiKey)).status).toBe(204);
      const versions = await t.resources.database.db
        .selectFrom('asset_versions')
        .select('id')
        .where('asset_id', '=', book.id)
        .execute();
      expect(versions).toHaveLength(1);
      const logs = (await accountLogs(t, owner.accountId)).filter(
        (l) => l.target_id === book.id && l.action === 'delete_worldbook',
      );
      expect(logs).toHaveLength(1);
    });

    it('with expected_version: 404 when missing, 409 when stale, 204 when current', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
      const stale = await t.http
        .delete(`/worldbooks/${book.id}?expected_version=2`)
        .set('x-api-key', owner.apiKey);
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const ok = await t.http
        .delete(`/worldbooks/${book.id}?expected_version=1`)
        .set('x-api-key', owner.apiKey);
      expect(ok.status).toBe(204);
      const gone = await t.http
        .delete(`/worldbooks/${book.id}?expected_version=1`)
        .set('x-api-key', owner.apiKey);
      expect([gone.status, gone.body.error.code]).toEqual([404, 'worldbook_not_found']);
    });

    it.each([
      'expected_version=abc',
      'expected_version=',
      'expected_version=-1',
      'expected_version=1.5',
      'force=1',
    ])('refuses ?%s with 400 validation_error', async (query) => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
      const res = await t.http.delete(`/worldbooks/${book.id}?${query}`).set('x-api-key', owner.apiKey);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect((await get(`/worldbooks/${book.id}`)).status).toBe(200);
    });
  });
});
