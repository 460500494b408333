import { nchatFile } from '../support/factories/chat-transfer';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/**
 * Numbers past what a column or a query can hold (Postgres SQLSTATE 22003) are bad input: 400
 * `validation_error`, never a 500 (docs/decisions.md "Platform").
 */
describe('numbers out of range', () => {
  let t: TestApp;
  let sessionId: string;

  beforeAll(async () => {
    t = await startTestApp();
    // A chat with floors, so the transcript reads reach the database.
    const imported = await t.http
      .post('/import/chat')
      .set('x-api-key', ADMIN_KEY)
      .send({
        data: JSON.stringify(nchatFile([{ input: { content: 'hi' }, output: { content: 'hello' } }])),
      });
    expect(imported.status).toBe(201);
    sessionId = imported.body.data.session_id;
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string) => t.http.get(path).set('x-api-key', ADMIN_KEY);

  it.each([
    ['a list offset past a bigint', '/sessions?offset=100000000000000000000'],
    ['a character list offset', '/characters?offset=100000000000000000000'],
    ['an operation log offset', '/operation-logs?offset=100000000000000000000'],
    ['a variable list offset', '/variables?offset=100000000000000000000'],
    ['a preset list offset', '/presets?offset=100000000000000000000'],
    ['a user card list offset', '/users?offset=100000000000000000000'],
    ['a tag list offset', '/vc-tags?offset=100000000000000000000'],
  ])('%s answers 400 validation_error, not 500', async (_what, path) => {
    const res = await get(path);
    expect([res.status, res.body.error?.code]).toEqual([400, 'validation_error']);
  });

  it('an in-range value still answers', async () => {
    expect((await get('/sessions?offset=1000000')).status).toBe(200);
    // Transcript bounds are bounds: past any floor number they answer the floors there are.
    const after = await get(`/sessions/${sessionId}/floors?after_floor_no=3000000000`);
    expect([after.status, after.body.data]).toEqual([200, []]);
    const before = await get(`/sessions/${sessionId}/floors?before_floor_no=3000000000`);
    expect([before.status, before.body.data.length]).toEqual([200, 1]);
  });
});
