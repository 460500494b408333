import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

/**
 * The durable variables a turn reads (docs/decisions.md "Turn latency": on the branch head they come
 * with the branch read; from another floor through the variable layers' own query): floor over branch
 * over chat for `getvar`, global for `getglobalvar`, and both ways agree.
 */
describe('turn variables: every scope reaches the turn, from the head and from another floor', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const post = (path: string, body: Record<string, unknown>) =>
    t.http
      .post(path)
      .set('x-api-key', ADMIN_KEY)
      .send(body)
      .then((r) => r);
  const put = async (scope: string, scopeId: string, key: string, value: unknown) => {
    const res = await t.http
      .put('/variables')
      .set('x-api-key', ADMIN_KEY)
      .send({ scope, scope_id: scopeId, key, value });
    expect([200, 201]).toContain(res.status);
  };
  const preview = async (sessionId: string, extra: Record<string, unknown> = {}) => {
    const res = await post(`/sessions/${sessionId}/prompt-runtime/preview`, {
      text: '{{getvar::v}}|{{getvar::w}}|{{getvar::chat_only}}|{{getvar::branch_only}}|{{getglobalvar::g}}',
      ...extra,
    });
    expect(res.status).toBe(200);
    return res.body.data.expanded_text as string;
  };

  it('reads floor, branch, chat and global variables with their priorities', async () => {
    const session = await createSession(t);
    const floors: string[] = [];
    // Floor variables come from turns: a local `setvar` is promoted to the floor when the turn commits.
    for (const message of ['one {{setvar::v::from the first floor}}', 'two {{setvar::v::from the head}}']) {
      const res = await post(`/sessions/${session.id}/respond`, { message });
      expect(res.status).toBe(200);
      floors.push(res.body.data.floor_id);
    }
    const branch = await t.resources.database.db
      .selectFrom('branches')
      .select(['id', 'head_floor_id'])
      .where('session_id', '=', session.id)
      .where('name', '=', 'main')
      .executeTakeFirstOrThrow();
    expect(branch.head_floor_id).toBe(floors[1]);
    const g = `g${Date.now()}`;
    expect(await preview(session.id)).toBe('from the head||||');

    await put('global', 'global', 'g', g);
    await put('chat', session.id, 'w', 'from chat');
    await put('chat', session.id, 'chat_only', 'c');
    expect(await preview(session.id)).toBe(`from the head|from chat|c||${g}`);

    await put('branch', `${session.id}:${branch.id}`, 'w', 'from branch');
    await put('branch', `${session.id}:${branch.id}`, 'branch_only', 'b');
    expect(await preview(session.id)).toBe(`from the head|from branch|c|b|${g}`);
    // From another floor: that floor's variables (the layers' own query), the rest alike.
    expect(await preview(session.id, { source_floor_id: floors[0] })).toBe(
      `from the first floor|from branch|c|b|${g}`,
    );
    // The same on the branch addressed by id.
    expect(await preview(session.id, { branch_id: branch.id })).toBe(`from the head|from branch|c|b|${g}`);
  });
});
