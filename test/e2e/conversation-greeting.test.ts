import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import { operationLogsRepository } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Issue 5 item 1: every session gets a `main` branch with it; a bound character's first message becomes
 * the greeting floor (floor 0, committed), alternate greetings inactive greeting pages (swipes), raw
 * text, token counts stored when written (docs/decisions.md "Conversations").
 */
describe('Conversations: main branch and greeting floor', () => {
  let t: TestApp;
  let alice: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.resources.database.db;
  const createSession = async (body: Record<string, unknown>, key = alice.apiKey) => {
    const res = await t.http.post('/sessions').set('x-api-key', key).send(body);
    expect(res.status).toBe(201);
    return res.body.data as { id: string };
  };
  const transcript = async (sessionId: string) => {
    const res = await t.http.get(`/sessions/${sessionId}/floors`).set('x-api-key', alice.apiKey);
    expect(res.status).toBe(200);
    return res.body as { data: Array<Record<string, any>>; meta: { limit: number; has_more: boolean } };
  };

  it('makes floor 0 from first_mes, with each alternate greeting an inactive page', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({
        name: 'Mira',
        first_mes: 'Hello {{user}}, I am {{char}}.',
        alternate_greetings: ['Second {{user}}', '', 'Third greeting'],
      }),
    });
    const session = await createSession({
      character_id: character.id,
      character_version_id: character.versionId,
    });
    const body = await transcript(session.id);
    expect(body.meta).toEqual({ limit: 100, has_more: false });
    expect(body.data).toHaveLength(1);
    const [floor] = body.data;
    const branches = await t.http.get(`/sessions/${session.id}/branches`).set('x-api-key', alice.apiKey);
    const main = branches.body.data[0];
    expect(branches.body.data).toHaveLength(1);
    expect(main).toEqual({
      id: expect.stringMatching(/^br_/),
      session_id: session.id,
      name: 'main',
      source_floor_id: null,
      head_floor_id: floor.id,
      head_floor_no: 0,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(floor).toEqual({
      id: expect.stringMatching(/^flr_/),
      floor_no: 0,
      branch_id: main.id,
      parent_floor_id: null,
      state: 'committed',
      token_in: 0,
      token_out: 0,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      reasoning_text: null,
      pages: expect.any(Array),
    });
    // The empty alternate greeting is skipped; macros stay unexpanded.
    const texts = ['Hello {{user}}, I am {{char}}.', 'Second {{user}}', 'Third greeting'];
    expect(floor.pages).toHaveLength(3);
    floor.pages.forEach((page: Record<string, any>, i: number) => {
      expect(page).toEqual({
        id: expect.stringMatching(/^pg_/),
        page_no: i,
        page_kind: 'greeting',
        is_active: i === 0,
        version: i + 1,
        checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
        messages: [
          {
            id: expect.stringMatching(/^msg_/),
            seq: 0,
            role: 'assistant',
            content: texts[i],
            content_format: 'text',
            is_hidden: false,
            source: 'character_greeting',
            created_at: expect.any(Number),
          },
        ],
      });
    });
    expect(new Set(floor.pages.map((p: { checksum: string }) => p.checksum)).size).toBe(3);
    // Token counts were stored when the messages were written.
    const stored = await db()
      .selectFrom('messages')
      .select(['content', 'token_count', 'token_encoding'])
      .where('floor_id', '=', floor.id)
      .orderBy('page_id')
      .execute();
    expect(stored).toHaveLength(3);
    for (const m of stored) {
      expect(m.token_encoding).toBe('o200k_base');
      expect(m.token_count).toBe(tokenCounter('o200k_base').count(m.content));
      expect(m.token_count).toBeGreaterThan(0);
    }
    const log = (
      await operationLogsRepository.list(
        db(),
        { accountId: alice.accountId, filters: { action: 'create_session', session_id: session.id } },
        { limit: 10, offset: 0, sortOrder: 'asc' },
      )
    )[0];
    expect(log.metadata).toMatchObject({
      greeting: true,
      main_branch_id: main.id,
      greeting_floor_id: floor.id,
    });
  });

  it('uses the latest version of character_id when no version is given', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ first_mes: 'Latest hello' }),
    });
    const session = await createSession({ character_id: character.id });
    const [floor] = (await transcript(session.id)).data;
    expect(floor.pages.map((p: any) => p.messages[0].content)).toEqual(['Latest hello']);
  });

  it('makes no greeting floor with greeting: false, without a character, or with an empty first_mes', async () => {
    const character = await importCharacter(t, { apiKey: alice.apiKey });
    const blank = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ first_mes: '   ', alternate_greetings: ['never shown alone'] }),
    });
    const sessions = [
      await createSession({ character_version_id: character.versionId, greeting: false }),
      await createSession({}),
      await createSession({ character_version_id: blank.versionId }),
    ];
    for (const session of sessions) {
      expect((await transcript(session.id)).data).toEqual([]);
      const branches = await t.http.get(`/sessions/${session.id}/branches`).set('x-api-key', alice.apiKey);
      expect(branches.body.data).toEqual([
        expect.objectContaining({
          name: 'main',
          head_floor_id: null,
          head_floor_no: null,
          source_floor_id: null,
        }),
      ]);
    }
  });

  it('refuses another account’s or an unknown character version (404), creating nothing', async () => {
    const bob = await createAccountCaller(t, { name: 'Bob' });
    const bobs = await importCharacter(t, { apiKey: bob.apiKey });
    for (const id of [bobs.versionId, 'chrv_unknown']) {
      const res = await t.http
        .post('/sessions')
        .set('x-api-key', alice.apiKey)
        .send({ character_version_id: id });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('character_version_not_found');
    }
  });

  it('gives the session a character import creates its greeting floor too', async () => {
    const res = await t.http
      .post('/import/character')
      .set('x-api-key', alice.apiKey)
      .send({ payload: characterCard({ first_mes: 'Imported hi', alternate_greetings: ['Alt'] }) });
    expect(res.status).toBe(201);
    const sessionId = res.body.data.session.id as string;
    const [floor] = (await transcript(sessionId)).data;
    expect(floor.floor_no).toBe(0);
    expect(floor.pages.map((p: any) => [p.messages[0].content, p.is_active])).toEqual([
      ['Imported hi', true],
      ['Alt', false],
    ]);
  });

  it('deletes the whole conversation with its session', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ first_mes: 'Bye soon', alternate_greetings: ['Alt'] }),
    });
    const session = await createSession({ character_version_id: character.versionId });
    const [floor] = (await transcript(session.id)).data;
    const branch = await t.http.post(`/floors/${floor.id}/branch`).set('x-api-key', alice.apiKey).send({});
    expect(branch.status).toBe(201);
    expect((await t.http.delete(`/sessions/${session.id}`).set('x-api-key', alice.apiKey)).status).toBe(200);
    for (const table of ['branches', 'floors', 'floor_lines', 'pages', 'messages'] as const) {
      const rows = await db().selectFrom(table).select('id').where('session_id', '=', session.id).execute();
      expect([table, rows.length]).toEqual([table, 0]);
    }
    const gone = await t.http.get(`/floors/${floor.id}`).set('x-api-key', alice.apiKey);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('floor_not_found');
  });

  it('creates main lazily for a session that has none, once', async () => {
    const session = await createSession({ greeting: false });
    await db().deleteFrom('branches').where('session_id', '=', session.id).execute();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.http.get(`/sessions/${session.id}/branches`).set('x-api-key', alice.apiKey),
      ),
    );
    const ids = new Set(results.map((r) => r.body.data[0].id));
    expect(results.every((r) => r.status === 200 && r.body.data.length === 1)).toBe(true);
    expect(ids.size).toBe(1);
    const rows = await db()
      .selectFrom('branches')
      .select('id')
      .where('session_id', '=', session.id)
      .execute();
    expect(rows.map((r) => r.id)).toEqual([...ids]);
  });
});
