import { addOutputPage } from '@hearth/app';
import { inTransaction, operationLogsRepository, type SessionRow } from '@hearth/persistence';
import { characterCard, importCharacter } from '../support/factories/characters';
import { appendGeneratingFloor, appendTurns } from '../support/factories/conversation';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

interface PageJson {
  id: string;
  page_kind: string;
  is_active: boolean;
  version: number;
  messages: Array<{ content: string }>;
}

/**
 * Swipes (docs/decisions.md "Conversations"): `POST /pages/:id/activate` switches a floor's active page
 * of a kind and answers the floor; one active page per kind even under 20 parallel switches; errors and
 * isolation. Also `GET /floors/:id` and `GET /floors/:id/operation-logs` on real floors.
 */
describe('Conversations: swipes and floor reads', () => {
  let t: TestApp;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createAccountCaller(t, { name: 'Alice' });
    bob = await createAccountCaller(t, { name: 'Bob' });
  });
  afterAll(async () => {
    await t.close();
  });

  const db = () => t.resources.database.db;
  const newSession = async (body: Record<string, unknown> = { greeting: false }): Promise<SessionRow> => {
    const s = await createSession(t, { apiKey: alice.apiKey, body });
    return (await findSessionRow(t, s.id))!;
  };
  const activate = (pageId: string, key = alice.apiKey) =>
    t.http.post(`/pages/${pageId}/activate`).set('x-api-key', key).send();
  const getFloor = (floorId: string, key = alice.apiKey) =>
    t.http.get(`/floors/${floorId}`).set('x-api-key', key);
  const addPages = async (floorId: string, count: number) => {
    for (let i = 0; i < count; i++) {
      await inTransaction(db(), ({ tx }) =>
        addOutputPage(tx, {
          floorId,
          messages: [{ role: 'assistant', content: `retry ${i}`, source: 'model' }],
          activate: false,
        }),
      );
    }
  };
  const activeCount = async (floorId: string, kind: string) =>
    (
      await db()
        .selectFrom('pages')
        .select('id')
        .where('floor_id', '=', floorId)
        .where('page_kind', '=', kind as 'output')
        .where('is_active', '=', true)
        .execute()
    ).length;

  it('switches the active greeting page (swipe) and answers the floor', async () => {
    const character = await importCharacter(t, {
      apiKey: alice.apiKey,
      payload: characterCard({ first_mes: 'One', alternate_greetings: ['Two', 'Three'] }),
    });
    const session = await newSession({ character_version_id: character.versionId });
    const [greeting] = (await t.http.get(`/sessions/${session.id}/floors`).set('x-api-key', alice.apiKey))
      .body.data as Array<{ id: string; pages: PageJson[] }>;
    const third = greeting.pages[2];
    const res = await activate(third.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: greeting.id,
      floor_no: 0,
      session_id: session.id,
      state: 'committed',
      superseded_at: null,
    });
    expect(res.body.data.pages.map((p: PageJson) => [p.messages[0].content, p.is_active])).toEqual([
      ['One', false],
      ['Two', false],
      ['Three', true],
    ]);
    expect((await getFloor(greeting.id)).body.data).toEqual(res.body.data);
    const logs = await operationLogsRepository.list(
      db(),
      { accountId: alice.accountId, filters: { action: 'activate_page', session_id: session.id } },
      { limit: 10, offset: 0, sortOrder: 'asc' },
    );
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      target_type: 'page',
      target_id: third.id,
      floor_id: greeting.id,
      before_ref: { active_page_id: greeting.pages[0].id },
      after_ref: { active_page_id: third.id },
    });
    // Activating the active page changes and logs nothing.
    const again = await activate(third.id);
    expect(again.status).toBe(200);
    expect(again.body.data.updated_at).toBe(res.body.data.updated_at);
    expect(
      await operationLogsRepository.count(db(), {
        accountId: alice.accountId,
        filters: { action: 'activate_page', session_id: session.id },
      }),
    ).toBe(1);
  });

  it('keeps one active output page under 20 parallel switches, leaving the input page alone', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    await addPages(floor.id, 20);
    const pages = (await getFloor(floor.id)).body.data.pages as PageJson[];
    const outputs = pages.filter((p) => p.page_kind === 'output');
    expect(outputs.map((p) => p.version)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    const targets = outputs.slice(1);
    const results = await Promise.all(targets.map((p) => activate(p.id)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const r of results) {
      const active = (r.body.data.pages as PageJson[]).filter((p) => p.is_active);
      expect(active.map((p) => p.page_kind).sort()).toEqual(['input', 'output']);
    }
    expect(await activeCount(floor.id, 'output')).toBe(1);
    expect(await activeCount(floor.id, 'input')).toBe(1);
    const final = (await getFloor(floor.id)).body.data.pages as PageJson[];
    const winner = final.find((p) => p.page_kind === 'output' && p.is_active)!;
    expect(targets.map((p) => p.id)).toContain(winner.id);
  });

  it('refuses switches on a generating floor, unknown pages, other accounts and observers', async () => {
    const session = await newSession();
    await appendTurns(t, session, 1);
    const generating = await appendGeneratingFloor(t, session);
    const input = (await getFloor(generating.id)).body.data.pages[0] as PageJson;
    const busy = await activate(input.id);
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('floor_not_committed');

    const missing = await activate('pg_missing');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('page_not_found');

    const bobSession = (await findSessionRow(
      t,
      (await createSession(t, { apiKey: bob.apiKey, body: { greeting: false } })).id,
    ))!;
    const [bobFloor] = await appendTurns(t, bobSession, 1);
    await addPages(bobFloor.id, 1);
    const bobPages = (await getFloor(bobFloor.id, bob.apiKey)).body.data.pages as PageJson[];
    const foreign = await activate(bobPages[2].id);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('page_not_found');
    expect(await activeCount(bobFloor.id, 'output')).toBe(1);
    expect(bobPages.find((p) => p.page_kind === 'output' && p.is_active)?.version).toBe(1);

    const project = await db()
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', bobSession.project_id)
      .executeTakeFirstOrThrow();
    await addMember(t, project, alice, 'observer');
    const denied = await activate(bobPages[2].id);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('project_access_denied');
    expect((await getFloor(bobFloor.id)).status).toBe(200);
  });

  it('refuses a switch on an archived session', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    await addPages(floor.id, 1);
    await t.http.patch(`/sessions/${session.id}`).set('x-api-key', alice.apiKey).send({ status: 'archived' });
    const pages = (await getFloor(floor.id)).body.data.pages as PageJson[];
    const res = await activate(pages[2].id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('session_archived');
  });

  it('lists a real floor’s operation logs by ownership, not by log rows', async () => {
    const session = await newSession();
    const [floor] = await appendTurns(t, session, 1);
    const res = await t.http.get(`/floors/${floor.id}/operation-logs`).set('x-api-key', alice.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    const other = await t.http.get(`/floors/${floor.id}/operation-logs`).set('x-api-key', bob.apiKey);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
    await addPages(floor.id, 1);
    const pages = (await getFloor(floor.id)).body.data.pages as PageJson[];
    await activate(pages[2].id);
    const after = await t.http.get(`/floors/${floor.id}/operation-logs`).set('x-api-key', alice.apiKey);
    expect(after.body.data.map((l: { action: string }) => l.action)).toEqual(['activate_page']);
  });
});
