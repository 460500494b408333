import { createAccountCaller, type Caller } from '../support/factories/members';
import { generateWorldbook, importWorldbook, readWorldbookFixture } from '../support/factories/worldbooks';
import { startTestApp, type TestApp } from '../support/test-app';

/** Worldbooks on the embedded adapters (PGlite): the bulk entry upsert, lock timeout and versions work there too. */
describe('Worldbooks, embedded mode', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
    owner = await createAccountCaller(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('imports, edits through both views, versions, rolls back and exports', async () => {
    const original = readWorldbookFixture('Eldoria.st-1.18.0.json');
    const book = await importWorldbook(t, owner.apiKey, original, 'Eldoria');
    const http = (method: 'get' | 'post' | 'put' | 'patch', path: string, body?: object) =>
      t.http[method](path)
        .set('x-api-key', owner.apiKey)
        .send(body ?? {});
    const list = await http('get', `/worldbooks/${book.id}/entries?q=eldoria`);
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBeGreaterThan(0);
    const entryId = list.body.data[0].id;
    const patched = await http('patch', `/worldbooks/${book.id}/entries/${entryId}`, {
      content: 'edited',
      expected_version: 1,
    });
    expect([patched.status, patched.body.data.worldbook_version]).toEqual([200, 2]);
    const detail = (await http('get', `/worldbooks/${book.id}`)).body.data;
    expect(detail.data.entries.some((e: { content: string }) => e.content === 'edited')).toBe(true);
    const put = await http('put', `/worldbooks/${book.id}`, {
      name: 'Replaced',
      data: generateWorldbook(3),
      expected_version: 2,
    });
    expect([put.status, put.body.data.version]).toEqual([200, 3]);
    const v1 = (await http('get', `/worldbooks/${book.id}/versions`)).body.data.pop();
    expect(v1.version_no).toBe(1);
    const rolled = await http('post', `/worldbooks/${book.id}/rollback`, { version_id: v1.id });
    expect([rolled.status, rolled.body.data.version, rolled.body.data.name]).toEqual([200, 4, 'Eldoria']);
    const exported = JSON.parse((await http('get', `/export/worldbook/${book.id}`)).text);
    expect(exported).toEqual({ ...original, name: 'Eldoria' });
  });
});
