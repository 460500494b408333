import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  runRow,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
} from './turns-support';

/**
 * Inputs a route-by-route fuzz of the API answered with a 500 (docs/decisions.md "Platform"): each is
 * now a 400 `validation_error` with nothing written, and a model reply holding text Postgres cannot
 * store is kept with U+FFFD instead of failing the turn.
 */
describe('hostile fields', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    owner = await createAccountCaller(t, { name: 'Owner' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const send = (method: 'post' | 'patch' | 'get', path: string, body?: object, key = ADMIN_KEY) =>
    t.http[method](path)
      .set('x-api-key', key)
      .send(body)
      .then((r) => r);
  const expect400 = (res: { status: number; body: { error?: { code: string } } }) =>
    expect([res.status, res.body.error?.code]).toEqual([400, 'validation_error']);

  it('edit-and-regenerate refuses NUL and unpaired surrogates before the model is called', async () => {
    const session = await createSession(t);
    const turn = await send('post', `/sessions/${session.id}/respond`, { message: 'hello' });
    expect(turn.status).toBe(200);
    const [floor] = await floorsOf(t, session.id);
    const userMessage = floor.pages.find((p) => p.page_kind === 'input')!.messages[0];
    const calls = fake.requests.length;
    for (const content of ['a\u0000b', '\ud800', 'x\udfffy']) {
      expect400(await send('post', `/messages/${userMessage.id}/edit-and-regenerate`, { content }));
      expect400(await send('post', `/messages/${userMessage.id}/edit-and-regenerate`, { message: content }));
    }
    expect(fake.requests.length).toBe(calls);
    expect((await floorsOf(t, session.id))[0].pages).toHaveLength(floor.pages.length);
    // The branch is free: a well-formed edit works at once.
    const edited = await send('post', `/messages/${userMessage.id}/edit-and-regenerate`, {
      content: 'hi 👋',
    });
    expect(edited.status).toBe(200);
  });

  it('PATCH /clients/:id refuses null for name and status', async () => {
    const client = await createClientCaller(t, owner.accountId, 'Side');
    for (const body of [{ name: null }, { name: 'x', status: null }, { status: null }])
      expect400(await send('patch', `/clients/${client.clientId}`, body, owner.apiKey));
    const got = await send('get', `/clients/${client.clientId}`, undefined, owner.apiKey);
    expect(got.body.data).toMatchObject({ name: 'Side', status: 'active' });
  });

  it('POST /sessions refuses worldbook_ids: null', async () => {
    expect400(await send('post', '/sessions', { title: 'S', worldbook_ids: null }));
    expect((await send('post', '/sessions', { title: 'S', worldbook_ids: [] })).status).toBe(201);
  });

  it('the event stream refuses NUL in its filters before it opens', async () => {
    const session = await createSession(t);
    for (const query of ['types=%00', 'types=x%00y', 'session_id=a%00'])
      expect400(await send('get', `/projects/${session.projectId}/events/stream?${query}`));
  });

  it('a model reply with NUL or a broken surrogate is stored with U+FFFD', async () => {
    const session = await createSession(t);
    fake.script({ reply: 'a\u0000b \ud800 c' });
    const res = await send('post', `/sessions/${session.id}/respond`, { message: 'hi' });
    expect(res.status).toBe(200);
    expect(res.body.data.generated_text).toBe('a\ufffdb \ufffd c');
    const [floor] = await floorsOf(t, session.id);
    expect(floor.pages.find((p) => p.page_kind === 'output')!.messages[0].content).toBe('a\ufffdb \ufffd c');
  });

  it('a cancelled turn whose partial reply holds NUL ends its run (the branch is not left locked)', async () => {
    const session = await createSession(t);
    fake.script({ chunks: ['par\u0000t', 'ial'], stallAfterChunks: 1 });
    const call = await SseCall.open(
      t,
      'POST',
      `/sessions/${session.id}/respond/stream`,
      { message: 'hi' },
      { 'x-api-key': ADMIN_KEY },
    );
    await call.waitFor((c) => c.types.includes('chunk'), 10_000, 'the first chunk');
    const [start] = call.dataOf<{ run_id: string }>('start');
    call.drop();
    await until(
      async () => (await runRow(t, start.run_id))?.status === 'cancelled',
      10_000,
      'the cancellation',
    );
    expect((await runRow(t, start.run_id))?.pending_text).toBe('par\ufffdt');
    expect((await send('post', `/sessions/${session.id}/respond`, { message: 'again' })).status).toBe(200);
  });
});
