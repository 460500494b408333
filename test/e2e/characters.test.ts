import { readJsonFixture } from '@hearth/domain/formats/format.test-support';
import { assetVersionsRepository, operationLogsRepository } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Character management (library conventions): list with paging/search/sort, detail, versions, PATCH as a
 * new version, rollback, soft delete, the read-only lorebook, export by version, operation logs, and
 * another account's characters answering 404 on every route.
 */
describe('Characters', () => {
  let t: TestApp;
  let owner: Caller;
  let side: Caller;
  let other: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    side = await createClientCaller(t, owner.accountId, 'Side client');
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key = owner.apiKey) => t.http.get(path).set('x-api-key', key);
  const patch = (id: string, body: unknown, key = owner.apiKey) =>
    t.http
      .patch(`/characters/${id}`)
      .set('x-api-key', key)
      .send(body as object);
  const rollback = (id: string, body: unknown, key = owner.apiKey) =>
    t.http
      .post(`/characters/${id}/rollback`)
      .set('x-api-key', key)
      .send(body as object);
  const logsOf = async (targetId: string) =>
    (
      await operationLogsRepository.list(
        t.resources.database.db,
        { accountId: owner.accountId, filters: {} },
        { limit: 10000, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.target_id === targetId);

  describe('list', () => {
    let caller: Caller;
    const names = ['Alpha', 'bravo', 'Charlie', 'alphonse', 'Delta'];
    const ids: string[] = [];

    beforeAll(async () => {
      caller = await createAccountCaller(t, { name: 'Lister' });
      for (const name of names) {
        ids.push((await importCharacter(t, { apiKey: caller.apiKey, payload: characterCard({ name }) })).id);
      }
    });

    it('lists summaries newest-updated first by default, with meta', async () => {
      const res = await get('/characters', caller.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({
        total: 5,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'updated_at',
        sort_order: 'desc',
      });
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
      expect(res.body.data[0]).toEqual({
        id: ids[4],
        name: 'Delta',
        source: 'ext_frontend',
        source_format: 'chara_card_v2',
        version_no: 1,
        latest_version_id: expect.stringMatching(/^chrv_/),
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      expect(res.body.data[0]).not.toHaveProperty('data');
    });

    it('pages with limit and offset', async () => {
      const first = await get(
        '/characters?limit=2&offset=0&sort_by=created_at&sort_order=asc',
        caller.apiKey,
      );
      expect(first.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
      expect(first.body.meta).toMatchObject({ total: 5, limit: 2, offset: 0, has_more: true });
      const last = await get('/characters?limit=2&offset=4&sort_by=created_at&sort_order=asc', caller.apiKey);
      expect(last.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(4));
      expect(last.body.meta).toMatchObject({ has_more: false });
    });

    it('searches names case-insensitively with q and sorts by name', async () => {
      const res = await get('/characters?q=ALPH&sort_by=name&sort_order=asc', caller.apiKey);
      expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(['Alpha', 'alphonse']);
      expect(res.body.meta).toMatchObject({ total: 2, sort_by: 'name', sort_order: 'asc' });
      const none = await get('/characters?q=%25', caller.apiKey);
      expect(none.body.data).toEqual([]);
    });

    it('accepts limit 200 and refuses 201, 0, a negative offset and unknown sorts (400 validation_error)', async () => {
      expect((await get('/characters?limit=200', caller.apiKey)).status).toBe(200);
      for (const query of [
        'limit=201',
        'limit=0',
        'offset=-1',
        'sort_by=id',
        'sort_order=up',
        'limit=x',
        'zzz=1',
      ]) {
        const res = await get(`/characters?${query}`, caller.apiKey);
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
          query,
          status: 400,
          code: 'validation_error',
        });
      }
    });
  });

  describe('detail, update, versions and rollback', () => {
    it('GET answers the summary plus the latest card', async () => {
      const card = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
      const imported = await importCharacter(t, { apiKey: owner.apiKey, payload: card });
      const res = await get(`/characters/${imported.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: imported.id,
        name: 'Seraphina',
        version_no: 1,
        latest_version_id: imported.versionId,
        spec: 'chara_card_v3',
        spec_version: card.spec_version,
      });
      expect(res.body.data.data).toEqual(card.data);
    });

    it('PATCH makes a new version; versions are immutable and listed newest first', async () => {
      const { id, versionId: v1 } = await importCharacter(t, {
        apiKey: owner.apiKey,
        payload: characterCard({ name: 'Editable', tags: ['x'], extensions: { keep: 1 } }),
      });
      const res = await patch(id, {
        data: { name: 'Edited', description: 'New {{user}}', tags: ['y', 'z'] },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id, name: 'Edited', version_no: 2 });
      expect(res.body.data.latest_version_id).not.toBe(v1);
      expect(res.body.data.data).toMatchObject({
        name: 'Edited',
        description: 'New {{user}}',
        tags: ['y', 'z'],
        first_mes: 'Hi {{user}}',
        extensions: { keep: 1 },
      });
      const v2 = res.body.data.latest_version_id as string;

      const versions = await get(`/characters/${id}/versions`);
      expect(versions.status).toBe(200);
      expect(versions.body.data).toEqual([
        {
          id: v2,
          version_no: 2,
          name: 'Edited',
          change_kind: 'update',
          source_format: 'chara_card_v2',
          created_by_operation_id: expect.stringMatching(/^oplog_/),
          created_at: expect.any(Number),
        },
        expect.objectContaining({ id: v1, version_no: 1, name: 'Editable', change_kind: 'import' }),
      ]);
      expect(versions.body.meta).toEqual({
        total: 2,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'version_no',
        sort_order: 'desc',
      });
      const paged = await get(`/characters/${id}/versions?limit=1&offset=1`);
      expect(paged.body.data.map((v: { id: string }) => v.id)).toEqual([v1]);
      expect((await get(`/characters/${id}/versions?limit=201`)).status).toBe(400);

      const old = await get(`/characters/${id}/versions/${v1}`);
      expect(old.status).toBe(200);
      expect(old.body.data).toMatchObject({ id: v1, version_no: 1, character_id: id, name: 'Editable' });
      expect(old.body.data.payload.data).toMatchObject({ name: 'Editable', tags: ['x'] });

      const logs = await logsOf(id);
      expect(logs.map((l) => l.action)).toEqual(['import_character', 'update_character']);
      expect(logs[1]).toMatchObject({
        target_type: 'character',
        before_ref: { id, name: 'Editable', version_no: 1, version_id: v1 },
        after_ref: { id, name: 'Edited', version_no: 2, version_id: v2 },
      });
      expect(versions.body.data[0].created_by_operation_id).toBe(logs[1].id);

      // The export follows the latest version; version_id picks an older one.
      const latest = await get(`/export/character/${id}`);
      expect(latest.body.data.name).toBe('Edited');
      const byVersion = await get(`/export/character/${id}?format=v3&version_id=${v1}`);
      expect(byVersion.body).toMatchObject({
        spec: 'chara_card_v3',
        data: { name: 'Editable', tags: ['x'] },
      });
      expect(byVersion.headers['content-disposition']).toBe('attachment; filename="Editable.json"');
    });

    it('a PATCH that changes nothing writes nothing', async () => {
      const { id } = await importCharacter(t, {
        apiKey: owner.apiKey,
        payload: characterCard({ name: 'Same' }),
      });
      const res = await patch(id, { data: { name: 'Same' } });
      expect(res.status).toBe(200);
      expect(res.body.data.version_no).toBe(1);
      expect((await logsOf(id)).map((l) => l.action)).toEqual(['import_character']);
    });

    it('a non-default Client of the account may update it', async () => {
      const { id } = await importCharacter(t, { apiKey: owner.apiKey });
      const res = await patch(id, { data: { scenario: 'by the side client' } }, side.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data.version_no).toBe(2);
    });

    it('can replace and remove the embedded character_book', async () => {
      const card = readJsonFixture('characters', 'Seraphina.chara.chara_card_v2.json');
      const { id } = await importCharacter(t, { apiKey: owner.apiKey, payload: card });
      const replaced = await patch(id, {
        data: { character_book: { name: 'Tiny', entries: [{ keys: ['k'], content: 'c', id: 1 }] } },
      });
      expect(replaced.status).toBe(200);
      const book = await get(`/characters/${id}/lorebook`);
      expect(book.body.data).toMatchObject({ name: 'Tiny', has_book: true });
      expect(book.body.data.entries).toHaveLength(1);
      const removed = await patch(id, { data: { character_book: null } });
      expect(removed.status).toBe(200);
      expect((await get(`/characters/${id}/lorebook`)).body.data).toMatchObject({
        has_book: false,
        entries: [],
      });
    });

    it.each([
      ['an unknown top-level key', { data: { name: 'x' }, name: 'x' }, /name/],
      ['no data', {}, /data/],
      ['data that is not an object', { data: 'x' }, /data/],
      ['empty data', { data: {} }, /at least one/],
      ['an unknown card field', { data: { favourite_colour: 'red' } }, /favourite_colour/],
      ['a name that is a number', { data: { name: 5 } }, /name/],
      ['an empty name', { data: { name: '' } }, /name/],
      ['a null name', { data: { name: null } }, /data\.name must not be null/],
      ['tags that are not strings', { data: { tags: ['a', 1] } }, /tags/],
      ['extensions that are an array', { data: { extensions: [] } }, /extensions/],
      ['a character_book without entries', { data: { character_book: { name: 'b' } } }, /entries/],
      [
        'a character_book entry that is a string',
        { data: { character_book: { entries: ['e'] } } },
        /entries\[0\]/,
      ],
    ])('PATCH with %s: 400 validation_error and no new version', async (_name, body, message) => {
      const { id } = await importCharacter(t, { apiKey: owner.apiKey });
      const res = await patch(id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(message);
      expect((await get(`/characters/${id}`)).body.data.version_no).toBe(1);
    });

    it('rollback makes a new version equal to the chosen one', async () => {
      const { id, versionId: v1 } = await importCharacter(t, {
        apiKey: owner.apiKey,
        payload: characterCard({ name: 'Roller', description: 'first' }),
      });
      await patch(id, { data: { name: 'Rolled', description: 'second' } });
      const res = await rollback(id, { version_id: v1 });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id, name: 'Roller', version_no: 3 });
      const v3 = res.body.data.latest_version_id as string;
      const [first, third] = await Promise.all([
        get(`/characters/${id}/versions/${v1}`),
        get(`/characters/${id}/versions/${v3}`),
      ]);
      expect(third.body.data.payload).toEqual(first.body.data.payload);
      expect(third.body.data).toMatchObject({
        change_kind: 'rollback',
        version_no: 3,
        source_format: 'chara_card_v2',
      });
      const logs = await logsOf(id);
      expect(logs.map((l) => l.action)).toEqual([
        'import_character',
        'update_character',
        'rollback_character',
      ]);
      expect(logs[2]).toMatchObject({
        before_ref: { name: 'Rolled', version_no: 2 },
        after_ref: { id, name: 'Roller', version_no: 3, version_id: v3 },
        metadata: { from_version_id: v1, from_version_no: 1 },
      });
      expect(third.body.data.created_by_operation_id).toBe(logs[2].id);
    });

    it('versions of another character or unknown ones: 404 asset_version_not_found', async () => {
      const a = await importCharacter(t, { apiKey: owner.apiKey });
      const b = await importCharacter(t, { apiKey: owner.apiKey });
      for (const res of [
        await get(`/characters/${a.id}/versions/${b.versionId}`),
        await get(`/characters/${a.id}/versions/chrv_missing`),
        await get(`/characters/${a.id}/lorebook?version_id=${b.versionId}`),
        await rollback(a.id, { version_id: b.versionId }),
        await rollback(a.id, { version_id: 'chrv_missing' }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('asset_version_not_found');
      }
      expect((await get(`/characters/${a.id}`)).body.data.version_no).toBe(1);
      const bad = await rollback(a.id, {});
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    });

    it('parallel PATCHes each get their own version number', async () => {
      const { id } = await importCharacter(t, { apiKey: owner.apiKey });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => patch(id, { data: { description: `edit ${i}` } })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      const versions = await get(`/characters/${id}/versions`);
      expect(versions.body.data.map((v: { version_no: number }) => v.version_no)).toEqual(
        Array.from({ length: 11 }, (_, i) => 11 - i),
      );
      expect((await get(`/characters/${id}`)).body.data.version_no).toBe(11);
    });
  });

  describe('lorebook', () => {
    it('exposes the embedded character_book as normalised worldbook entries', async () => {
      const card = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
      const { id, versionId } = await importCharacter(t, { apiKey: owner.apiKey, payload: card });
      const res = await get(`/characters/${id}/lorebook`);
      expect(res.status).toBe(200);
      const book = (card.data as { character_book: { entries: Array<Record<string, unknown>> } })
        .character_book;
      expect(res.body.data).toMatchObject({
        character_id: id,
        character_version_id: versionId,
        has_book: true,
      });
      expect(res.body.data.entries).toHaveLength(book.entries.length);
      expect(res.body.data.entries[0]).toMatchObject({
        uid: expect.any(Number),
        keys: book.entries[0].keys,
        content: book.entries[0].content,
        disable: !(book.entries[0].enabled as boolean),
      });
      expect(res.body.data.entries[0]).not.toHaveProperty('raw');
      const byVersion = await get(`/characters/${id}/lorebook?version_id=${versionId}`);
      expect(byVersion.body.data).toEqual(res.body.data);
    });

    it('a card without a book answers an empty lorebook', async () => {
      const { id } = await importCharacter(t, { apiKey: owner.apiKey });
      expect((await get(`/characters/${id}/lorebook`)).body.data).toMatchObject({
        has_book: false,
        name: null,
        entries: [],
      });
    });
  });

  describe('export', () => {
    it('names the file after the character, escaping quotes and encoding non-ASCII names', async () => {
      const quoted = await importCharacter(t, {
        apiKey: owner.apiKey,
        payload: characterCard({ name: 'The "Quoted" \\ One' }),
      });
      expect((await get(`/export/character/${quoted.id}`)).headers['content-disposition']).toBe(
        'attachment; filename="The \\"Quoted\\" \\\\ One.json"',
      );
      const unicode = await importCharacter(t, {
        apiKey: owner.apiKey,
        payload: characterCard({ name: 'Zoë 猫' }),
      });
      const res = await get(`/export/character/${unicode.id}`);
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="Zo_ _.json"; filename*=UTF-8''${encodeURIComponent('Zoë 猫.json')}`,
      );
      expect(res.body).toMatchObject({
        spec: 'chara_card_v2',
        spec_version: '2.0',
        data: { name: 'Zoë 猫' },
      });
    });

    it('answers 404 not_found for a missing character or version, 400 for a bad format', async () => {
      const a = await importCharacter(t, { apiKey: owner.apiKey });
      const b = await importCharacter(t, { apiKey: owner.apiKey });
      for (const path of [
        '/export/character/chr_missing',
        `/export/character/${a.id}?version_id=chrv_missing`,
        `/export/character/${a.id}?version_id=${b.versionId}`,
      ]) {
        const res = await get(path);
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
          path,
          status: 404,
          code: 'not_found',
        });
      }
      for (const query of ['format=v4', 'format=png', 'other=1']) {
        const res = await get(`/export/character/${a.id}?${query}`);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
      }
    });
  });

  describe('delete', () => {
    it('soft-deletes: every route then answers 404, versions and sessions stay', async () => {
      const imported = await t.http
        .post('/import/character')
        .set('x-api-key', owner.apiKey)
        .send({ payload: characterCard({ name: 'Doomed' }) });
      const id = imported.body.data.character.id as string;
      const versionId = imported.body.data.character.latest_version_id as string;
      const sessionId = imported.body.data.session.id as string;
      await patch(id, { data: { description: 'second' } });

      const res = await t.http.delete(`/characters/${id}`).set('x-api-key', owner.apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { id, deleted: true } });

      for (const res of [
        await get(`/characters/${id}`),
        await get(`/characters/${id}/versions`),
        await get(`/characters/${id}/versions/${versionId}`),
        await get(`/characters/${id}/lorebook`),
        await patch(id, { data: { name: 'Back' } }),
        await rollback(id, { version_id: versionId }),
        await t.http.delete(`/characters/${id}`).set('x-api-key', owner.apiKey),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('character_not_found');
      }
      const exported = await get(`/export/character/${id}`);
      expect(exported.status).toBe(404);
      expect(exported.body.error.code).toBe('not_found');
      const list = await get('/characters?limit=200');
      expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(id);

      const versions = await assetVersionsRepository.listOfAsset(t.resources.database.db, id, {
        limit: 10,
        offset: 0,
      });
      expect(versions.total).toBe(2);
      const session = await get(`/sessions/${sessionId}`);
      expect(session.body.data).toMatchObject({ character_id: id, character_version_id: versionId });
      const logs = await logsOf(id);
      expect(logs.map((l) => l.action)).toEqual(['import_character', 'update_character', 'delete_character']);
      expect(logs[2].before_ref).toMatchObject({ id, name: 'Doomed', version_no: 2 });
    });
  });

  describe('isolation', () => {
    it("another account's character answers 404 on every route and nothing of it changes", async () => {
      const card = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
      const { id, versionId } = await importCharacter(t, { apiKey: owner.apiKey, payload: card });
      const key = other.apiKey;
      const notFound: Array<[string, { status: number; body: { error?: { code: string } } }]> = [
        ['detail', await get(`/characters/${id}`, key)],
        ['versions', await get(`/characters/${id}/versions`, key)],
        ['version', await get(`/characters/${id}/versions/${versionId}`, key)],
        ['lorebook', await get(`/characters/${id}/lorebook`, key)],
        ['patch', await patch(id, { data: { name: 'Stolen' } }, key)],
        ['rollback', await rollback(id, { version_id: versionId }, key)],
        ['delete', await t.http.delete(`/characters/${id}`).set('x-api-key', key)],
      ];
      for (const [route, res] of notFound) {
        expect({ route, status: res.status, code: res.body.error?.code }).toEqual({
          route,
          status: 404,
          code: 'character_not_found',
        });
      }
      for (const path of [
        `/export/character/${id}`,
        `/export/character/${id}?format=v3&version_id=${versionId}`,
      ]) {
        const res = await get(path, key);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      const list = await get('/characters?limit=200', key);
      expect(list.body.data.map((c: { id: string }) => c.id)).not.toContain(id);
      expect((await get(`/characters?q=Seraphina`, key)).body.meta.total).toBe(0);

      const after = await get(`/characters/${id}`);
      expect(after.body.data).toMatchObject({
        name: 'Seraphina',
        version_no: 1,
        latest_version_id: versionId,
      });
      expect((await logsOf(id)).map((l) => l.action)).toEqual(['import_character']);
    });

    it("a version of another account's character is not reachable through one's own character", async () => {
      const mine = await importCharacter(t, { apiKey: other.apiKey });
      const theirs = await importCharacter(t, { apiKey: owner.apiKey });
      const res = await get(`/characters/${mine.id}/versions/${theirs.versionId}`, other.apiKey);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('asset_version_not_found');
      const rolled = await rollback(mine.id, { version_id: theirs.versionId }, other.apiKey);
      expect(rolled.status).toBe(404);
      expect(rolled.body.error.code).toBe('asset_version_not_found');
    });
  });
});
