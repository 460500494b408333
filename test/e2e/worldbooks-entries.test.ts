import { createAccountCaller, type Caller } from '../support/factories/members';
import {
  accountLogs,
  generateWorldbook,
  importWorldbook,
  worldbookEntryRows,
} from '../support/factories/worldbooks';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Spec 3 worldbook entries: defaults, uid assignment, filters, sorts, paging limits, batch routes with
 * their limits and result shapes, and every write bumping the parent book's version.
 */
describe('Worldbook entries', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (id: string) => `/worldbooks/${id}/entries`;
  const get = (path: string, key = owner.apiKey) => t.http.get(path).set('x-api-key', key);
  const post = (path: string, body: object, key = owner.apiKey) =>
    t.http.post(path).set('x-api-key', key).send(body);
  const patch = (path: string, body: object, key = owner.apiKey) =>
    t.http.patch(path).set('x-api-key', key).send(body);
  const version = async (id: string) => (await get(`/worldbooks/${id}`)).body.data.version as number;
  const emptyBook = () => importWorldbook(t, owner.apiKey, { entries: {} }, 'Empty');

  describe('create, read, update, delete', () => {
    it('creates an entry with spec 3 defaults and uid 0, then max+1; each write bumps the version', async () => {
      const book = await emptyBook();
      const res = await post(base(book.id), {
        keys: ['dragon'],
        content: 'Dragons {{char}}',
        expected_version: 1,
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^wbe_/),
        worldbook_id: book.id,
        uid: 0,
        keys: ['dragon'],
        keys_secondary: [],
        content: 'Dragons {{char}}',
        comment: '',
        selective: true,
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
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
        worldbook_version: 2,
      });
      // Gaps: the next uid is the highest + 1.
      const second = await post(base(book.id), {
        keys: [],
        content: 'Outlet text',
        position: 7,
        outlet_name: 'notes',
        scan_depth: 3,
        case_sensitive: true,
        delay_until_recursion: 2,
        role: 2,
        order: -5,
      });
      expect(second.body.data).toMatchObject({
        uid: 1,
        position: 7,
        outlet_name: 'notes',
        scan_depth: 3,
        case_sensitive: true,
        delay_until_recursion: 2,
        role: 2,
        order: -5,
        worldbook_version: 3,
      });
      expect(await version(book.id)).toBe(3);
      // The raw view and the export show the new entries in ST names.
      const exported = JSON.parse((await get(`/export/worldbook/${book.id}`)).text);
      expect(exported.entries['1']).toMatchObject({
        uid: 1,
        key: [],
        content: 'Outlet text',
        position: 7,
        outletName: 'notes',
        scanDepth: 3,
        caseSensitive: true,
        delayUntilRecursion: 2,
        role: 2,
        order: -5,
        probability: 100,
      });
      const detail = (await get(`/worldbooks/${book.id}`)).body.data.data;
      expect(detail.entries.map((e: { uid: number }) => e.uid)).toEqual([0, 1]);
    });

    it('20 parallel creates get distinct uids and 20 versions; 20 parallel PATCHes with one expected_version: one wins', async () => {
      const book = await emptyBook();
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(base(book.id), { keys: [`k${i}`], content: `c${i}` })),
      );
      expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(created.map((r) => r.body.data.uid).sort((a: number, b: number) => a - b)).toEqual([
        ...Array(20).keys(),
      ]);
      expect(await version(book.id)).toBe(21);
      const target = created[0].body.data.id;
      const patches = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          patch(`${base(book.id)}/${target}`, { comment: `w${i}`, expected_version: 21 }),
        ),
      );
      expect(patches.filter((r) => r.status === 200)).toHaveLength(1);
      expect(
        patches.filter((r) => r.status === 409 && r.body.error.code === 'worldbook_conflict'),
      ).toHaveLength(19);
      const winner = patches.findIndex((r) => r.status === 200);
      expect((await get(`${base(book.id)}/${target}`)).body.data).toMatchObject({
        comment: `w${winner}`,
        worldbook_version: 22,
      });
    });

    it.each([
      [{ content: 'x' }, 'keys'],
      [{ keys: ['a'] }, 'content'],
      [{ keys: 'a', content: 'x' }, 'keys'],
      [{ keys: [1], content: 'x' }, 'keys'],
      [{ keys: [], content: null }, 'content'],
      [{ keys: [], content: 'x', position: 8 }, 'position'],
      [{ keys: [], content: 'x', role: 3 }, 'role'],
      [{ keys: [], content: 'x', selective_logic: 4 }, 'selective_logic'],
      [{ keys: [], content: 'x', order: 1.5 }, 'order'],
      [{ keys: [], content: 'x', disable: 'true' }, 'disable'],
      [{ keys: [], content: 'x', uid: 4 }, 'uid'],
      [{ keys: [], content: 'x', expected_version: 'v' }, 'expected_version'],
    ])('refuses %j with 400 validation_error naming %s, writing nothing', async (body, field) => {
      const book = await emptyBook();
      const res = await post(base(book.id), body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(await version(book.id)).toBe(1);
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(0);
    });

    it('answers 409 worldbook_conflict for a stale expected_version and 404 worldbook_not_found for a missing book', async () => {
      const book = await emptyBook();
      const stale = await post(base(book.id), { keys: [], content: 'x', expected_version: 5 });
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const missing = await post(base('wb_missing'), { keys: [], content: 'x' });
      expect([missing.status, missing.body.error.code]).toEqual([404, 'worldbook_not_found']);
      expect(await worldbookEntryRows(t, book.id)).toHaveLength(0);
    });

    it('reads one entry; a missing one is 404 not_found', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2));
      const [row] = await worldbookEntryRows(t, book.id);
      const res = await get(`${base(book.id)}/${row.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: row.id,
        uid: 0,
        keys: ['key-0', 'Even'],
        worldbook_version: 1,
      });
      expect((await get(`${base(book.id)}/wbe_missing`)).body.error.code).toBe('not_found');
      expect((await get(`${base('wb_missing')}/${row.id}`)).body.error.code).toBe('worldbook_not_found');
    });

    it('patches the fields given (null clears nullable ones), visible in the raw view and the export', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2));
      const [row] = await worldbookEntryRows(t, book.id);
      const first = await patch(`${base(book.id)}/${row.id}`, {
        content: 'Patched',
        scan_depth: 5,
        case_sensitive: false,
        expected_version: 1,
      });
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({
        content: 'Patched',
        scan_depth: 5,
        case_sensitive: false,
        worldbook_version: 2,
      });
      const second = await patch(`${base(book.id)}/${row.id}`, {
        scan_depth: null,
        delay_until_recursion: 0,
        keys: ['Neu'],
      });
      expect(second.body.data).toMatchObject({
        content: 'Patched',
        scan_depth: null,
        case_sensitive: false,
        delay_until_recursion: null,
        keys: ['Neu'],
        worldbook_version: 3,
      });
      const detail = (await get(`/worldbooks/${book.id}`)).body.data.data;
      expect(detail.entries[0]).toMatchObject({
        content: 'Patched',
        key: ['Neu'],
        scanDepth: null,
        caseSensitive: false,
      });
      const exported = JSON.parse((await get(`/export/worldbook/${book.id}`)).text);
      expect(exported.entries['0']).toMatchObject({
        content: 'Patched',
        key: ['Neu'],
        caseSensitive: false,
        probability: 100,
      });
      // Search text follows the change.
      expect((await get(`${base(book.id)}?q=neu`)).body.data.map((e: { id: string }) => e.id)).toEqual([
        row.id,
      ]);
      const logs = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === row.id);
      expect(logs.map((l) => l.action)).toEqual(['update_worldbook_entry', 'update_worldbook_entry']);
      expect(JSON.stringify(logs)).not.toContain('Patched');
    });

    it.each([[{}], [{ expected_version: 1 }], [{ fields: { content: 'x' } }], [{ content: 5 }]])(
      'refuses a PATCH of %j with 400 validation_error',
      async (body) => {
        const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
        const [row] = await worldbookEntryRows(t, book.id);
        const res = await patch(`${base(book.id)}/${row.id}`, body);
        expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
        expect(await version(book.id)).toBe(1);
      },
    );

    it('PATCH answers 409 when stale and 404 for a missing entry', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
      const [row] = await worldbookEntryRows(t, book.id);
      const stale = await patch(`${base(book.id)}/${row.id}`, { content: 'x', expected_version: 9 });
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const missing = await patch(`${base(book.id)}/wbe_missing`, { content: 'x' });
      expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
      expect(await version(book.id)).toBe(1);
    });

    it('deletes with ?expected_version: 200 {id, deleted: true}; stale 409; bad query 400; gone 404', async () => {
      const book = await importWorldbook(t, owner.apiKey, generateWorldbook(2));
      const [row] = await worldbookEntryRows(t, book.id);
      const del = (query: string) =>
        t.http.delete(`${base(book.id)}/${row.id}${query}`).set('x-api-key', owner.apiKey);
      expect((await del('?expected_version=abc')).body.error.code).toBe('validation_error');
      const stale = await del('?expected_version=3');
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const ok = await del('?expected_version=1');
      expect(ok.status).toBe(200);
      expect(ok.body.data).toEqual({ id: row.id, deleted: true, worldbook_version: 2 });
      const again = await del('');
      expect([again.status, again.body.error.code]).toEqual([404, 'not_found']);
      expect((await worldbookEntryRows(t, book.id)).map((r) => r.uid)).toEqual([1]);
      const exported = JSON.parse((await get(`/export/worldbook/${book.id}`)).text);
      expect(Object.keys(exported.entries)).toEqual(['1']);
      const log = (await accountLogs(t, owner.accountId)).find((l) => l.target_id === row.id);
      expect(log?.action).toBe('delete_worldbook_entry');
    });
  });

  describe('list', () => {
    let bookId: string;
    beforeAll(async () => {
      bookId = (await importWorldbook(t, owner.apiKey, generateWorldbook(250), 'Big')).id;
    });

    it('pages by order asc by default (limit 50), with meta', async () => {
      const res = await get(base(bookId));
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(50);
      expect(res.body.meta).toEqual({
        total: 250,
        limit: 50,
        offset: 0,
        has_more: true,
        sort_by: 'order',
        sort_order: 'asc',
        worldbook_version: 1,
      });
      const orders = res.body.data.map((e: { order: number }) => e.order);
      expect(orders).toEqual([...orders].sort((a, b) => a - b));
    });

    it('takes limit 200 and refuses 201 and 0', async () => {
      const full = await get(`${base(bookId)}?limit=200&offset=200`);
      expect([full.status, full.body.data.length, full.body.meta.has_more]).toEqual([200, 50, false]);
      expect((await get(`${base(bookId)}?limit=200`)).body.data).toHaveLength(200);
      for (const query of ['limit=201', 'limit=0', 'offset=-1']) {
        const res = await get(`${base(bookId)}?${query}`);
        expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'validation_error']);
      }
    });

    it('sorts by uid and updated_at in both orders', async () => {
      const desc = await get(`${base(bookId)}?sort_by=uid&sort_order=desc&limit=3`);
      expect(desc.body.data.map((e: { uid: number }) => e.uid)).toEqual([249, 248, 247]);
      const asc = await get(`${base(bookId)}?sort_by=updated_at&sort_order=asc&limit=3`);
      expect(asc.body.meta).toMatchObject({ sort_by: 'updated_at', sort_order: 'asc' });
      expect(asc.body.data).toHaveLength(3);
    });

    it('filters by disable, constant and position (query strings), and q over keys, comment and content', async () => {
      const disabled = await get(`${base(bookId)}?disable=true&limit=200`);
      expect(disabled.body.meta.total).toBe(84);
      expect(disabled.body.data.every((e: { disable: boolean }) => e.disable)).toBe(true);
      expect((await get(`${base(bookId)}?disable=false`)).body.meta.total).toBe(166);
      expect((await get(`${base(bookId)}?constant=true`)).body.meta.total).toBe(25);
      expect((await get(`${base(bookId)}?constant=1`)).body.meta.total).toBe(25);
      expect((await get(`${base(bookId)}?position=4`)).body.meta.total).toBe(50);
      expect((await get(`${base(bookId)}?position=4&constant=true`)).body.meta.total).toBe(0);
      // keys (case-insensitive), comment, content
      expect((await get(`${base(bookId)}?q=KEY-249`)).body.data.map((e: { uid: number }) => e.uid)).toEqual([
        249,
      ]);
      expect(
        (await get(`${base(bookId)}?q=comment 123`)).body.data.map((e: { uid: number }) => e.uid),
      ).toEqual([123]);
      expect(
        (await get(`${base(bookId)}?q=entry 249 lorem`)).body.data.map((e: { uid: number }) => e.uid),
      ).toEqual([249]);
      expect((await get(`${base(bookId)}?q=odd&limit=1`)).body.meta.total).toBe(125);
      expect((await get(`${base(bookId)}?q=%25`)).body.meta.total).toBe(0);
      expect((await get(`${base(bookId)}?q=&limit=1`)).body.meta.total).toBe(250);
      expect((await get(`${base(bookId)}?q=${'y'.repeat(500)}`)).body.meta.total).toBe(0);
    });

    it.each([
      'disable=yes',
      'constant=2',
      'position=8',
      'position=x',
      'sort_by=name',
      'sort_order=down',
      `q=${'x'.repeat(501)}`,
      'x=1',
    ])('refuses ?%s with 400 validation_error', async (query) => {
      const res = await get(`${base(bookId)}?${query}`);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    });

    it('answers 404 worldbook_not_found for a missing book', async () => {
      expect((await get(base('wb_missing'))).body.error.code).toBe('worldbook_not_found');
    });
  });

  describe('batch routes', () => {
    let bookId: string;
    let ids: string[];
    let foreignId: string;
    let otherAccountId: string;
    beforeAll(async () => {
      bookId = (await importWorldbook(t, owner.apiKey, generateWorldbook(130), 'Batch')).id;
      ids = (await worldbookEntryRows(t, bookId)).map((r) => r.id);
      const sibling = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'Sibling');
      foreignId = (await worldbookEntryRows(t, sibling.id))[0].id;
      const theirs = await importWorldbook(t, other.apiKey, generateWorldbook(1), 'Theirs');
      otherAccountId = (await worldbookEntryRows(t, theirs.id))[0].id;
    });
    const send = (method: 'patch' | 'post' | 'put', path: string, body: object) =>
      t.http[method](`${base(bookId)}/batch/${path}`)
        .set('x-api-key', owner.apiKey)
        .send(body);

    it('batch update: 1 id and 100 ids, results in order, one version per batch', async () => {
      const v = await version(bookId);
      const one = await send('patch', 'update', {
        ids: [ids[0]],
        fields: { comment: 'one' },
        expected_version: v,
      });
      expect(one.status).toBe(200);
      expect(one.body.data.results).toEqual([
        {
          index: 0,
          id: ids[0],
          action: 'updated',
          data: expect.objectContaining({ id: ids[0], comment: 'one' }),
        },
      ]);
      expect(one.body.data.meta).toEqual({ total: 1, updated: 1, not_found: 0, worldbook_version: v + 1 });
      const hundred = await send('patch', 'update', {
        ids: ids.slice(0, 100),
        fields: { disable: true, depth: 9 },
      });
      expect(hundred.body.data.meta).toEqual({
        total: 100,
        updated: 100,
        not_found: 0,
        worldbook_version: v + 2,
      });
      expect(hundred.body.data.results.map((r: { index: number }) => r.index)).toEqual([
        ...Array(100).keys(),
      ]);
      const rows = await worldbookEntryRows(t, bookId);
      expect(rows.slice(0, 100).every((r) => r.disable && r.depth === 9)).toBe(true);
      expect(rows[100].depth).toBe(4);
      const log = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === bookId).pop();
      expect(log?.action).toBe('batch_update_worldbook_entries');
    });

    it('batch update reports ids of another book or account as not_found and never touches them', async () => {
      const v = await version(bookId);
      const res = await send('patch', 'update', {
        ids: [foreignId, ids[5], otherAccountId, 'wbe_missing'],
        fields: { content: 'hijacked' },
      });
      expect(res.body.data.results.map((r: { action: string }) => r.action)).toEqual([
        'not_found',
        'updated',
        'not_found',
        'not_found',
      ]);
      expect(res.body.data.results[0]).toEqual({ index: 0, id: foreignId, action: 'not_found', data: null });
      expect(res.body.data.meta).toEqual({ total: 4, updated: 1, not_found: 3, worldbook_version: v + 1 });
      const touched = await t.resources.database.db
        .selectFrom('worldbook_entries')
        .select('content')
        .where('id', 'in', [foreignId, otherAccountId])
        .execute();
      expect(touched.map((r) => r.content)).not.toContain('hijacked');
      // Nothing found: nothing written, no version.
      const none = await send('patch', 'update', { ids: [foreignId], fields: { content: 'x' } });
      expect(none.body.data.meta).toEqual({ total: 1, updated: 0, not_found: 1, worldbook_version: v + 1 });
      expect(await version(bookId)).toBe(v + 1);
    });

    it.each([
      ['update', 'patch', (ids: string[]) => ({ ids: ids.slice(0, 101), fields: { comment: 'x' } })],
      ['update', 'patch', () => ({ ids: [], fields: { comment: 'x' } })],
      ['update', 'patch', (ids: string[]) => ({ ids: [ids[0], ids[0]], fields: { comment: 'x' } })],
      ['update', 'patch', (ids: string[]) => ({ ids: [ids[0]], fields: {} })],
      ['update', 'patch', (ids: string[]) => ({ ids: [ids[0]] })],
      ['update', 'patch', (ids: string[]) => ({ ids: [ids[0]], fields: { position: 9 } })],
      ['update', 'patch', (ids: string[]) => ({ ids: [ids[0]], fields: { bogus: 1 } })],
      ['delete', 'post', (ids: string[]) => ({ ids: ids.slice(0, 101) })],
      ['delete', 'post', (ids: string[]) => ({ ids: [ids[1], ids[1]] })],
      ['delete', 'post', () => ({ ids: [] })],
      ['reorder', 'put', (ids: string[]) => ({ items: ids.slice(0, 101).map((id) => ({ id, order: 1 })) })],
      [
        'reorder',
        'put',
        (ids: string[]) => ({
          items: [
            { id: ids[0], order: 1 },
            { id: ids[0], order: 2 },
          ],
        }),
      ],
      ['reorder', 'put', (ids: string[]) => ({ items: [{ id: ids[0], order: 1.5 }] })],
      ['reorder', 'put', (ids: string[]) => ({ items: [{ id: ids[0] }] })],
      ['reorder', 'put', () => ({ items: [] })],
    ] as const)(
      'batch %s refuses a bad body with 400 validation_error and changes nothing',
      async (path, method, body) => {
        const v = await version(bookId);
        const res = await send(method, path, body(ids));
        expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
        expect(await version(bookId)).toBe(v);
      },
    );

    it('batch routes answer 409 for a stale expected_version and 404 for a missing book', async () => {
      const stale = await send('put', 'reorder', { items: [{ id: ids[0], order: 1 }], expected_version: 0 });
      expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
      const missing = await t.http
        .post(`${base('wb_missing')}/batch/delete`)
        .set('x-api-key', owner.apiKey)
        .send({ ids: [ids[0]] });
      expect([missing.status, missing.body.error.code]).toEqual([404, 'worldbook_not_found']);
    });

    it('reorders 100 entries: results like batch update, the raw view follows', async () => {
      const items = ids.slice(0, 100).map((id, i) => ({ id, order: 1000 - i }));
      const res = await send('put', 'reorder', { items });
      expect(res.status).toBe(200);
      expect(res.body.data.meta).toMatchObject({ total: 100, updated: 100, not_found: 0 });
      expect(res.body.data.results[3]).toMatchObject({
        index: 3,
        id: ids[3],
        action: 'updated',
        data: { order: 997 },
      });
      const top = await get(`${base(bookId)}?sort_order=desc&limit=2`);
      expect(top.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0], ids[1]]);
      const detail = (await get(`/worldbooks/${bookId}`)).body.data.data;
      expect(detail.entries[0].order).toBe(1000);
      const log = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === bookId).pop();
      expect(log?.action).toBe('reorder_worldbook_entries');
    });

    it('batch delete: found ids deleted, others not_found and untouched', async () => {
      const v = await version(bookId);
      const res = await send('post', 'delete', {
        ids: [ids[129], otherAccountId, ids[128]],
        expected_version: v,
      });
      expect(res.status).toBe(200);
      expect(res.body.data.results).toEqual([
        { index: 0, id: ids[129], action: 'deleted', data: null },
        { index: 1, id: otherAccountId, action: 'not_found', data: null },
        { index: 2, id: ids[128], action: 'deleted', data: null },
      ]);
      expect(res.body.data.meta).toEqual({ total: 3, deleted: 2, not_found: 1, worldbook_version: v + 1 });
      expect(await worldbookEntryRows(t, bookId)).toHaveLength(128);
      const still = await t.resources.database.db
        .selectFrom('worldbook_entries')
        .select('id')
        .where('id', '=', otherAccountId)
        .execute();
      expect(still).toHaveLength(1);
      const hundred = await send('post', 'delete', { ids: ids.slice(0, 100) });
      expect(hundred.body.data.meta).toMatchObject({ total: 100, deleted: 100, not_found: 0 });
      expect(await worldbookEntryRows(t, bookId)).toHaveLength(28);
      const log = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === bookId).pop();
      expect(log?.action).toBe('batch_delete_worldbook_entries');
    });
  });
});
