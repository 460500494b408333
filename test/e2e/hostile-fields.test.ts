import { characterCard } from '../support/factories/characters';
import { extJsonlChat, nchatFile } from '../support/factories/chat-transfer';
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
 * store is kept with U+FFFD instead of failing the turn. The uploads fuzz added a `null` PNG and `nchat`
 * files the database refused (400 `import_parse_error` now; their job and backup forms are in
 * hostile-uploads.test.ts); a SillyTavern chat's unstorable text is imported as U+FFFD.
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

  /** Rows of a table (this suite's calls run one at a time), to show a refused import wrote nothing. */
  const rows = async (table: 'characters' | 'sessions' | 'floors' | 'messages') =>
    Number(
      (
        await t.resources.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('POST /import/character refuses png_base64: null (it read .replace of null: 500)', async () => {
    const before = await rows('characters');
    for (const body of [
      { png_base64: null },
      { png_base64: null, create_session: false },
      { png_base64: null, payload: characterCard() },
    ])
      expect400(await send('post', '/import/character', body));
    expect(await rows('characters')).toBe(before);
    const ok = await send('post', '/import/character', { payload: characterCard(), create_session: false });
    expect(ok.status).toBe(201);
  });

  it('an nchat file with text Postgres cannot store or a number past its integer column is 400 import_parse_error', async () => {
    const nchat = JSON.stringify(nchatFile([{ input: { content: 'hello' }, output: { content: 'hi' } }]));
    const cases: Array<[string, Record<string, unknown>]> = [
      [nchat.replace('"hello"', '"he\\u0000llo"'), { path: '$.data.floors[0].pages[0].messages[0].content' }],
      [nchat.replace('"hello"', '"he\\ud800llo"'), { path: '$.data.floors[0].pages[0].messages[0].content' }],
      [nchat.replace('"metadata":{}', '"metadata":{"a":"\\udfff"}'), { path: '$.data.floors[0].metadata.a' }],
      [nchat.replace('"token_in":0', '"token_in":2147483648'), { path: '$.data.floors[0].token_in' }],
      [nchat.replace('"version":1', '"version":2147483648'), { path: '$.data.floors[0].pages[0].version' }],
      [nchat.replace('"seq":0', '"seq":10000000000'), { path: '$.data.floors[0].pages[0].messages[0].seq' }],
    ];
    const before = await Promise.all([rows('sessions'), rows('floors'), rows('messages')]);
    for (const [data, details] of cases) {
      const res = await send('post', '/import/chat', { data });
      expect([res.status, res.body.error?.code]).toEqual([400, 'import_parse_error']);
      expect(res.body.error.details).toMatchObject(details);
    }
    expect(await Promise.all([rows('sessions'), rows('floors'), rows('messages')])).toEqual(before);
    // Paired surrogates (an emoji) and the largest integer still import.
    const fine = nchat.replace('"hello"', '"he 👋"').replace('"token_in":0', '"token_in":2147483647');
    expect((await send('post', '/import/chat', { data: fine })).status).toBe(201);
  });

  it("a SillyTavern chat's NUL or broken emoji is imported as U+FFFD, in text and in kept extras", async () => {
    const [header, ...messages] = extJsonlChat(1).split('\n');
    const data = [
      '{"user_name":"u\\u0000","character_name":"C","chat_metadata":{}}',
      '{"name":"U","is_user":true,"mes":"a\\u0000b \\ud83d"}',
      '{"name":"B","is_user":false,"mes":"ok 👋","extra":{"x":"\\ud800"}}',
      ...messages,
    ].join('\n');
    expect(header).toContain('chat_metadata');
    const res = await send('post', '/import/chat', { data });
    expect(res.status).toBe(201);
    const sessionId = (res.body.data.session_id ?? res.body.data.id) as string;
    const floors = await t.http.get(`/sessions/${sessionId}/floors`).set('x-api-key', ADMIN_KEY);
    const texts = (
      floors.body.data as Array<{ pages: Array<{ messages: Array<{ content: string }> }> }>
    ).flatMap((f) => f.pages.flatMap((p) => p.messages.map((m) => m.content)));
    expect(texts).toEqual(expect.arrayContaining(['a\ufffdb \ufffd', 'ok 👋']));
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
