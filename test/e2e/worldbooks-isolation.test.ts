import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { generateWorldbook, importWorldbook, worldbookEntryRows } from '../support/factories/worldbooks';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Worldbooks belong to an account: every Client of it reads and writes them; another account gets 404
 * on every route (the list does not show them) and changes nothing.
 */
describe('Worldbook isolation', () => {
  let t: TestApp;
  let owner: Caller;
  let side: Caller;
  let stranger: Caller;
  let bookId: string;
  let entryId: string;
  let versionId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    side = await createClientCaller(t, owner.accountId, 'Side');
    stranger = await createAccountCaller(t, { name: 'Stranger' });
    bookId = (await importWorldbook(t, owner.apiKey, generateWorldbook(3), 'Private')).id;
    entryId = (await worldbookEntryRows(t, bookId))[0].id;
    versionId = (await t.http.get(`/worldbooks/${bookId}/versions`).set('x-api-key', owner.apiKey)).body
      .data[0].id;
  });
  afterAll(async () => {
    await t.close();
  });

  type Call = [
    string,
    'get' | 'put' | 'post' | 'patch' | 'delete',
    () => string,
    (() => object) | undefined,
    string,
  ];
  const calls: Call[] = [
    ['detail', 'get', () => `/worldbooks/${bookId}`, undefined, 'worldbook_not_found'],
    [
      'put',
      'put',
      () => `/worldbooks/${bookId}`,
      () => ({ name: 'Stolen', data: { entries: {} }, expected_version: 1 }),
      'worldbook_not_found',
    ],
    [
      'delete with version',
      'delete',
      () => `/worldbooks/${bookId}?expected_version=1`,
      undefined,
      'worldbook_not_found',
    ],
    ['versions', 'get', () => `/worldbooks/${bookId}/versions`, undefined, 'worldbook_not_found'],
    ['version', 'get', () => `/worldbooks/${bookId}/versions/${versionId}`, undefined, 'worldbook_not_found'],
    [
      'rollback',
      'post',
      () => `/worldbooks/${bookId}/rollback`,
      () => ({ version_id: 'x' }),
      'worldbook_not_found',
    ],
    ['export', 'get', () => `/export/worldbook/${bookId}`, undefined, 'not_found'],
    ['entry list', 'get', () => `/worldbooks/${bookId}/entries`, undefined, 'worldbook_not_found'],
    [
      'entry create',
      'post',
      () => `/worldbooks/${bookId}/entries`,
      () => ({ keys: [], content: 'x' }),
      'worldbook_not_found',
    ],
    ['entry get', 'get', () => `/worldbooks/${bookId}/entries/${entryId}`, undefined, 'worldbook_not_found'],
    [
      'entry patch',
      'patch',
      () => `/worldbooks/${bookId}/entries/${entryId}`,
      () => ({ content: 'x' }),
      'worldbook_not_found',
    ],
    [
      'entry delete',
      'delete',
      () => `/worldbooks/${bookId}/entries/${entryId}`,
      undefined,
      'worldbook_not_found',
    ],
    [
      'batch update',
      'patch',
      () => `/worldbooks/${bookId}/entries/batch/update`,
      () => ({ ids: [entryId], fields: { content: 'x' } }),
      'worldbook_not_found',
    ],
    [
      'batch delete',
      'post',
      () => `/worldbooks/${bookId}/entries/batch/delete`,
      () => ({ ids: [entryId] }),
      'worldbook_not_found',
    ],
    [
      'batch reorder',
      'put',
      () => `/worldbooks/${bookId}/entries/batch/reorder`,
      () => ({ items: [{ id: entryId, order: 1 }] }),
      'worldbook_not_found',
    ],
  ];

  it.each(calls)('another account: %s answers 404 %s', async (_name, method, path, body, code) => {
    const before = (await t.http.get(`/worldbooks/${bookId}`).set('x-api-key', owner.apiKey)).body.data;
    const res = await t.http[method](path())
      .set('x-api-key', stranger.apiKey)
      .send(body ? body() : {});
    expect([res.status, res.body.error?.code]).toEqual([404, code]);
    expect(JSON.stringify(res.body)).not.toContain('Private');
    const after = (await t.http.get(`/worldbooks/${bookId}`).set('x-api-key', owner.apiKey)).body.data;
    expect(after).toEqual(before);
  });

  it('another account: the list does not show it; an unconditional DELETE finds nothing to delete', async () => {
    const list = await t.http.get('/worldbooks').set('x-api-key', stranger.apiKey);
    expect(list.body.data.map((b: { id: string }) => b.id)).not.toContain(bookId);
    const del = await t.http.delete(`/worldbooks/${bookId}`).set('x-api-key', stranger.apiKey);
    expect(del.status).toBe(204);
    const still = await t.http.get(`/worldbooks/${bookId}`).set('x-api-key', owner.apiKey);
    expect([still.status, still.body.data.version]).toEqual([200, 1]);
    expect(await worldbookEntryRows(t, bookId)).toHaveLength(3);
  });

  it('every Client of the owning account reads and writes it', async () => {
    const list = await t.http.get('/worldbooks').set('x-api-key', side.apiKey);
    expect(list.body.data.map((b: { id: string }) => b.id)).toContain(bookId);
    const res = await t.http
      .patch(`/worldbooks/${bookId}/entries/${entryId}`)
      .set('x-api-key', side.apiKey)
      .send({ comment: 'by side client', expected_version: 1 });
    expect([res.status, res.body.data.worldbook_version]).toEqual([200, 2]);
  });
});
