import { createAccountCaller, type Caller } from '../support/factories/members';
import {
  accountLogs,
  generateWorldbook,
  importWorldbook,
  worldbookEntryRows,
} from '../support/factories/worldbooks';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Worldbook versions (docs/decisions.md "Worldbooks"): every write is a restorable version whose number
 * is the book's `version`; versions are full snapshots or deltas on the latest snapshot, and reading any
 * version gives the whole file as it was; rollback makes a new version with the old content.
 */
describe('Worldbook versions and rollback', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string) => t.http.get(path).set('x-api-key', owner.apiKey);
  const send = (method: 'post' | 'put' | 'patch' | 'delete', path: string, body: object = {}) =>
    t.http[method](path).set('x-api-key', owner.apiKey).send(body);
  const exportOf = async (id: string) => JSON.parse((await get(`/export/worldbook/${id}`)).text);
  const versionFormats = async (id: string) =>
    (
      await t.resources.database.db
        .selectFrom('asset_versions')
        .select(['version_no', 'payload'])
        .where('asset_id', '=', id)
        .orderBy('version_no', 'asc')
        .execute()
    ).map((v) => (v.payload as { format: string }).format);

  it('every write is a version equal to the export at that time (snapshots and deltas)', async () => {
    const book = await importWorldbook(t, owner.apiKey, generateWorldbook(150), 'Chain');
    const ids = (await worldbookEntryRows(t, book.id)).map((r) => r.id);
    const expected: Array<Record<string, unknown>> = [await exportOf(book.id)];
    const writes: Array<() => Promise<{ status: number }>> = [
      () => send('patch', `/worldbooks/${book.id}/entries/${ids[0]}`, { content: 'one' }),
      () => send('post', `/worldbooks/${book.id}/entries`, { keys: ['fresh'], content: 'new' }),
      () => send('delete', `/worldbooks/${book.id}/entries/${ids[1]}`),
      () =>
        send('patch', `/worldbooks/${book.id}/entries/batch/update`, {
          ids: ids.slice(2, 102),
          fields: { depth: 1 },
        }),
      () =>
        send('put', `/worldbooks/${book.id}/entries/batch/reorder`, {
          items: ids.slice(2, 102).map((id, i) => ({ id, order: i })),
        }),
      () => send('post', `/worldbooks/${book.id}/entries/batch/delete`, { ids: ids.slice(140, 145) }),
      () =>
        send('patch', `/worldbooks/${book.id}/entries/batch/update`, {
          ids: ids.slice(10, 110),
          fields: { role: 1 },
        }),
      () => send('patch', `/worldbooks/${book.id}/entries/${ids[3]}`, { keys: ['late'] }),
    ];
    for (const write of writes) {
      expect([200, 201]).toContain((await write()).status);
      expected.push(await exportOf(book.id));
    }
    // A PUT replacing most entries, then a small change on top.
    const detail = (await get(`/worldbooks/${book.id}`)).body.data;
    const put = await send('put', `/worldbooks/${book.id}`, {
      name: 'Chain renamed',
      data: { ...generateWorldbook(20), maxRecursionSteps: 2 },
      expected_version: detail.version,
    });
    expect(put.status).toBe(200);
    expected.push(await exportOf(book.id));
    const last = (await worldbookEntryRows(t, book.id))[0].id;
    await send('patch', `/worldbooks/${book.id}/entries/${last}`, { comment: 'after put' });
    expected.push(await exportOf(book.id));

    const formats = await versionFormats(book.id);
    expect(formats).toHaveLength(expected.length);
    expect(formats[0]).toBe('worldbook_snapshot');
    expect(formats.filter((f) => f === 'worldbook_delta').length).toBeGreaterThan(3);
    expect(formats.filter((f) => f === 'worldbook_snapshot').length).toBeGreaterThan(1);

    const list = await get(`/worldbooks/${book.id}/versions?limit=200`);
    expect(list.body.meta).toMatchObject({
      total: expected.length,
      sort_by: 'version_no',
      sort_order: 'desc',
    });
    const versions = [...list.body.data].reverse();
    expect(versions.map((v: { version_no: number }) => v.version_no)).toEqual(expected.map((_, i) => i + 1));
    expect((await get(`/worldbooks/${book.id}`)).body.data.version).toBe(expected.length);
    for (let i = 0; i < versions.length; i++) {
      const res = await get(`/worldbooks/${book.id}/versions/${versions[i].id}`);
      expect(res.status).toBe(200);
      expect({ version_no: i + 1, payload: res.body.data.payload }).toEqual({
        version_no: i + 1,
        payload: expected[i],
      });
    }
    expect(versions[versions.length - 3]).toMatchObject({ change_kind: 'update', name: 'Chain' });
    expect(versions[versions.length - 2]).toMatchObject({ change_kind: 'update', name: 'Chain renamed' });
  });

  it('takes a snapshot after 100 versions of small deltas', async () => {
    const book = await importWorldbook(t, owner.apiKey, generateWorldbook(3), 'Long chain');
    const [row] = await worldbookEntryRows(t, book.id);
    for (let i = 0; i < 100; i++) {
      const res = await send('patch', `/worldbooks/${book.id}/entries/${row.id}`, { comment: `c${i}` });
      expect(res.status).toBe(200);
    }
    const formats = await versionFormats(book.id);
    expect(formats).toHaveLength(101);
    expect(formats.map((f, i) => (f === 'worldbook_snapshot' ? i + 1 : null)).filter(Boolean)).toEqual([
      1, 101,
    ]);
    const latest = (await get(`/worldbooks/${book.id}/versions?limit=2`)).body.data;
    expect((await get(`/worldbooks/${book.id}/versions/${latest[0].id}`)).body.data.payload).toEqual(
      await exportOf(book.id),
    );
    const previous = (await get(`/worldbooks/${book.id}/versions/${latest[1].id}`)).body.data.payload;
    expect(previous.entries[String(row.uid)].comment).toBe('c98');
  });

  it('rollback makes a new version with the old content, keeping entry ids of kept uids', async () => {
    const book = await importWorldbook(
      t,
      owner.apiKey,
      { ...generateWorldbook(5), extensions: { a: 1 } },
      'Original',
    );
    const original = await exportOf(book.id);
    const rows = await worldbookEntryRows(t, book.id);
    const v1 = (await get(`/worldbooks/${book.id}/versions`)).body.data[0];
    await send('patch', `/worldbooks/${book.id}/entries/${rows[0].id}`, { content: 'changed' });
    await send('put', `/worldbooks/${book.id}`, {
      name: 'Replaced',
      data: { entries: { '0': { key: ['x'], content: 'only' }, '9': { key: [], content: 'nine' } } },
      expected_version: 2,
    });
    const res = await send('post', `/worldbooks/${book.id}/rollback`, {
      version_id: v1.id,
      expected_version: 3,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: book.id,
      name: 'Original',
      version: 4,
      source: 'ext_frontend',
    });
    expect(res.body.data.data.entries.map((e: { uid: number }) => e.uid)).toEqual([0, 1, 2, 3, 4]);
    expect(await exportOf(book.id)).toEqual(original);
    const after = await worldbookEntryRows(t, book.id);
    expect(after[0].id).toBe(rows[0].id);
    expect(after[0].content).toBe(rows[0].content);
    const versions = (await get(`/worldbooks/${book.id}/versions`)).body.data;
    expect(versions[0]).toMatchObject({ version_no: 4, change_kind: 'rollback', name: 'Original' });
    const log = (await accountLogs(t, owner.accountId)).filter((l) => l.target_id === book.id).pop();
    expect(log).toMatchObject({ action: 'rollback_worldbook', target_type: 'worldbook' });
    expect(log?.metadata).toMatchObject({ rolled_back_to_version_id: v1.id, rolled_back_to_version_no: 1 });
    expect(versions[0].created_by_operation_id).toBe(log?.id);
  });

  it('rollback and version reads answer 404 asset_version_not_found for unknown or foreign versions', async () => {
    const a = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'A');
    const b = await importWorldbook(t, owner.apiKey, generateWorldbook(1), 'B');
    const bVersion = (await get(`/worldbooks/${b.id}/versions`)).body.data[0].id;
    for (const versionId of ['wbv_missing', bVersion]) {
      const read = await get(`/worldbooks/${a.id}/versions/${versionId}`);
      expect([read.status, read.body.error.code]).toEqual([404, 'asset_version_not_found']);
      const roll = await send('post', `/worldbooks/${a.id}/rollback`, { version_id: versionId });
      expect([roll.status, roll.body.error.code]).toEqual([404, 'asset_version_not_found']);
    }
    expect((await get(`/worldbooks/${a.id}`)).body.data.version).toBe(1);
    const missing = await send('post', '/worldbooks/wb_missing/rollback', { version_id: bVersion });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'worldbook_not_found']);
    expect((await get('/worldbooks/wb_missing/versions')).body.error.code).toBe('worldbook_not_found');
  });

  it('rollback answers 409 for a stale expected_version and 400 for a bad body', async () => {
    const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
    const v1 = (await get(`/worldbooks/${book.id}/versions`)).body.data[0].id;
    const stale = await send('post', `/worldbooks/${book.id}/rollback`, {
      version_id: v1,
      expected_version: 2,
    });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'worldbook_conflict']);
    for (const body of [
      {},
      { version_id: 5 },
      { version_id: v1, expected_version: 'x' },
      { version_id: v1, other: 1 },
    ]) {
      const res = await send('post', `/worldbooks/${book.id}/rollback`, body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    }
    expect((await get(`/worldbooks/${book.id}`)).body.data.version).toBe(1);
  });

  it('pages versions with limit 1-200', async () => {
    const book = await importWorldbook(t, owner.apiKey, generateWorldbook(1));
    expect((await get(`/worldbooks/${book.id}/versions?limit=200`)).status).toBe(200);
    for (const query of ['limit=201', 'limit=0', 'offset=-1']) {
      const res = await get(`/worldbooks/${book.id}/versions?${query}`);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    }
  });
});
