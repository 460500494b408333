import { createSession } from '../support/factories/sessions';
import { activateProfile, createProfile, newMasterKey, plainKey } from '../support/factories/llm-profiles';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

/**
 * Issue 6 "Resolution in turns": a turn resolves its model through the stored bindings (session over
 * global, slot over `*`) before the `env` source, and the binding params lie over the request's
 * generation_params. Checked on what the fake model server receives from real `respond` calls.
 */
describe('turns: model profiles decide the model of a turn', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  const globalKey = plainKey('global');
  const sessionKey = plainKey('session');

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { env: { APP_SECRETS_MASTER_KEY: newMasterKey() } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const respond = (sessionId: string, body: Record<string, unknown>) =>
    t.http.post(`/sessions/${sessionId}/respond`).set('x-api-key', ADMIN_KEY).send(body);

  it('uses env, then the global binding, then the session binding, and back again on unbind', async () => {
    const session = await createSession(t);
    expect((await respond(session.id, { message: 'one' })).status).toBe(200);
    expect(fake.requests.at(-1)).toMatchObject({ protocol: 'openai', model: 'fake-model' });

    const global = await createProfile(t, ADMIN_KEY, {
      provider: 'openai',
      model_id: 'global-model',
      base_url: fake.openaiBaseUrl,
      api_key: globalKey,
    });
    await activateProfile(t, ADMIN_KEY, global.id, { params: { temperature: 0.25 } });
    expect(
      (await respond(session.id, { message: 'two', generation_params: { temperature: 1.5, top_p: 0.5 } }))
        .status,
    ).toBe(200);
    const second = fake.requests.at(-1)!;
    expect(second).toMatchObject({ protocol: 'openai', model: 'global-model' });
    expect(second.headers.authorization).toBe(`Bearer ${globalKey}`);
    // The binding's temperature wins over the request's; the request's top_p stays.
    expect(second.body).toMatchObject({ temperature: 0.25, top_p: 0.5 });

    const local = await createProfile(t, ADMIN_KEY, {
      provider: 'anthropic',
      model_id: 'session-model',
      base_url: fake.anthropicBaseUrl,
      api_key: sessionKey,
    });
    await activateProfile(t, ADMIN_KEY, local.id, { scope: 'session', session_id: session.id });
    expect((await respond(session.id, { message: 'three' })).status).toBe(200);
    const third = fake.requests.at(-1)!;
    expect(third).toMatchObject({ protocol: 'anthropic', model: 'session-model' });
    expect(String(third.headers['x-api-key'] ?? third.headers.authorization)).toContain(sessionKey);

    // Another session of the account still gets the global binding.
    const other = await createSession(t);
    expect((await respond(other.id, { message: 'elsewhere' })).status).toBe(200);
    expect(fake.requests.at(-1)).toMatchObject({ model: 'global-model' });

    const unbound = await t.http
      .delete(`/llm-profiles/bindings/*?scope=session&session_id=${session.id}`)
      .set('x-api-key', ADMIN_KEY);
    expect(unbound.status).toBe(200);
    expect((await respond(session.id, { message: 'four' })).status).toBe(200);
    expect(fake.requests.at(-1)).toMatchObject({ model: 'global-model' });
  });

  it('refuses a turn whose slot is bound to a disabled profile', async () => {
    const session = await createSession(t);
    const profile = await createProfile(t, ADMIN_KEY, {
      provider: 'openai',
      model_id: 'soon-disabled',
      base_url: fake.openaiBaseUrl,
    });
    await activateProfile(t, ADMIN_KEY, profile.id, { scope: 'session', session_id: session.id });
    await t.http
      .patch(`/llm-profiles/${profile.id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ status: 'disabled' })
      .expect(200);
    const before = fake.requests.length;
    const res = await respond(session.id, { message: 'hello?' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('instance_slot_disabled_required');
    expect(fake.requests.length).toBe(before);
  });
});
