import { createServer, type AddressInfo } from 'node:net';
import { archiveProject } from '../support/factories/projects';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';
import {
  FAKE_KEY,
  floorsOf,
  startFakeModelServer,
  startTurnsApp,
  type FakeModelServer,
} from './turns-support';

/** The turn error codes that depend on configuration or on what the model answers (docs "Turns and runs"). */
describe('turns: configuration and upstream errors', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  const others: TestApp[] = [];

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
  }, 60_000);
  afterAll(async () => {
    for (const app of others) await app.close();
    await t.close();
    await fake.close();
  });

  const respond = (app: TestApp, sessionId: string, body: Record<string, unknown> = { message: 'x' }) =>
    app.http.post(`/sessions/${sessionId}/respond`).set('x-api-key', ADMIN_KEY).send(body);

  const app = async (env: Record<string, string>) => {
    const started = await startTestApp({ database: t.database!, env });
    others.push(started);
    return started;
  };

  it('502 generation_invalid_response when the model answers something unreadable', async () => {
    const session = await createSession(t);
    fake.script({ rawBody: 'this is not json' });
    const res = await respond(t, session.id, { message: 'x', generation_params: { stream: false } });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('generation_invalid_response');
    expect(await floorsOf(t, session.id)).toEqual([]);
  });

  it('409 project_archived when the session’s Project is archived', async () => {
    const session = await createSession(t);
    await archiveProject(t, session.projectId);
    const res = await respond(t, session.id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('project_archived');
  });

  it('503 model_not_configured without a model; 400 ssrf_blocked for a loopback model without the opt-in; 502 unreachable', async () => {
    const session = await createSession(t);
    const bare = await app({});
    const none = await respond(bare, session.id);
    expect(none.status).toBe(503);
    expect(none.body.error.code).toBe('model_not_configured');

    const guarded = await app({
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake-model',
      LLM_BASE_URL: fake.openaiBaseUrl,
      LLM_API_KEY: FAKE_KEY,
    });
    const blocked = await respond(guarded, session.id);
    expect(blocked.status).toBe(400);
    expect(blocked.body.error.code).toBe('ssrf_blocked');

    // A port nothing listens on (taken, then released).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const closed = await app({
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake-model',
      LLM_BASE_URL: `http://127.0.0.1:${closedPort}/v1`,
      LLM_API_KEY: FAKE_KEY,
      ALLOW_PRIVATE_BASE_URL: 'true',
    });
    const unreachable = await respond(closed, session.id);
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.error.code).toBe('generation_upstream_unreachable');
    // The SDK's generic "Connection error." is followed by the cause's code.
    expect(unreachable.body.error.message).toMatch(/\(ECONNREFUSED\)$/);
    expect(unreachable.text).not.toContain(FAKE_KEY);
    // None of them left a floor or a running run behind.
    expect(await floorsOf(t, session.id)).toEqual([]);
    const ok = await respond(t, session.id);
    expect(ok.status).toBe(200);
  });
});
