import { createProfile, newMasterKey } from '../support/factories/llm-profiles';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/** The profile routes on the embedded adapters (PGlite, in-process bus), as `npm start` runs them. */
describe('LLM profiles (embedded)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true, env: { APP_SECRETS_MASTER_KEY: newMasterKey() } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, binds, resolves, refuses a duplicate name, unbinds and deletes', async () => {
    const profile = await createProfile(t, ADMIN_KEY, { preset_name: 'Embedded', model_id: 'emb' });
    const dup = await t.http
      .post('/llm-profiles')
      .set('x-api-key', ADMIN_KEY)
      .send({ preset_name: 'Embedded', provider: 'openai', model_id: 'x', api_key: 'sk-0123456789abcdef' });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'profile_conflict']);
    const session = await createSession(t, { apiKey: ADMIN_KEY });
    const bind = await t.http
      .post(`/llm-profiles/${profile.id}/activate`)
      .set('x-api-key', ADMIN_KEY)
      .send({ scope: 'session', session_id: session.id, instance_slot: 'narrator', params: { top_k: 3 } });
    expect(bind.status).toBe(200);
    const runtime = await t.http
      .get(`/llm-profiles/runtime?session_id=${session.id}`)
      .set('x-api-key', ADMIN_KEY);
    expect(runtime.body.data.slots[1]).toMatchObject({
      slot: 'narrator',
      source: 'session_profile',
      profile_id: profile.id,
      params: { top_k: 3 },
    });
    expect(runtime.body.data.slots[0]).toMatchObject({ source: 'env' });
    const busy = await t.http.delete(`/llm-profiles/${profile.id}`).set('x-api-key', ADMIN_KEY);
    expect([busy.status, busy.body.error.code]).toEqual([409, 'profile_in_use']);
    await t.http.delete(`/sessions/${session.id}`).set('x-api-key', ADMIN_KEY).expect(200);
    const deleted = await t.http.delete(`/llm-profiles/${profile.id}`).set('x-api-key', ADMIN_KEY);
    expect(deleted.body.data).toEqual({ id: profile.id, deleted: true });
  });
});
