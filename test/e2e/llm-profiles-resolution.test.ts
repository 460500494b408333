import { ResolveModelForTurnUseCase, type ResolvedTurnModel } from '@hearth/app';
import { LLM_CLIENT, type LlmClient } from '@hearth/platform';
import type { Actor } from '@hearth/permissions';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import {
  activateProfile,
  createProfile,
  newMasterKey,
  plainKey,
  profileRow,
  tamperProfileKey,
  type ProfileJson,
} from '../support/factories/llm-profiles';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession, type CreatedSession } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

const SLOTS = ['*', 'narrator', 'director', 'verifier', 'memory'] as const;
const ENV = {
  LLM_PROVIDER: 'openai',
  LLM_MODEL: 'gpt-env',
  LLM_BASE_URL: 'https://llm.example.com/v1',
  LLM_API_KEY: 'sk-env-secret-0123456789',
};

/**
 * Model slot resolution (docs/decisions.md "Model profiles"): `GET /llm-profiles/runtime` (spec 2's three
 * sources), `GET /llm-instances/resolved`, the turn resolver (`ResolveModelForTurnUseCase`) and what the
 * fake model server receives, undecryptable bindings skipped, and the effective-config layers.
 */
describe('LLM profile resolution', () => {
  const MASTER = newMasterKey();
  let t: TestApp;
  let fake: FakeModelServer;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTestApp({
      env: { ...ENV, APP_SECRETS_MASTER_KEY: MASTER, ALLOW_PRIVATE_BASE_URL: 'true', LOG_LEVEL: 'debug' },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const actorOf = (caller: Caller): Actor => ({
    kind: 'account',
    accountId: caller.accountId,
    accountRole: 'user',
    clientId: caller.clientId,
    clientIsDefault: true,
  });
  const runtime = async (caller: Caller, sessionId?: string) => {
    const res = await t.http
      .get(`/llm-profiles/runtime${sessionId ? `?session_id=${sessionId}` : ''}`)
      .set('x-api-key', caller.apiKey);
    expect(res.status).toBe(200);
    return res.body.data as { session_id: string | null; slots: Array<Record<string, unknown>> };
  };
  const resolver = () => t.app.get(ResolveModelForTurnUseCase);

  it('answers the five slots from env when nothing is bound (spec 2 item fields, env nulls)', async () => {
    const caller = await createAccountCaller(t);
    const view = await runtime(caller);
    expect(view.session_id).toBeNull();
    expect(view.slots).toEqual(
      SLOTS.map((slot) => ({
        slot,
        source: 'env',
        scope: null,
        profile_id: null,
        params: null,
        preset_name: null,
        provider: 'openai',
        model_id: 'gpt-env',
      })),
    );
  });

  /**
   * Every combination of the four binding kinds (global `*`, global narrator, session `*`, session
   * narrator): the narrator slot takes the highest of session-narrator > session-`*` > global-narrator >
   * global-`*` > env; the other slots ignore narrator bindings. Without a session only global ones apply.
   */
  describe('resolution order', () => {
    const KINDS = ['global*', 'globalN', 'session*', 'sessionN'] as const;
    type Kind = (typeof KINDS)[number];
    const combos = Array.from({ length: 16 }, (_, mask) => KINDS.filter((_, i) => mask & (1 << i)));
    const expectedNarrator = (present: Kind[], withSession: boolean): Kind | 'env' =>
      (['sessionN', 'session*', 'globalN', 'global*'] as const).find(
        (k) => present.includes(k) && (withSession || k.startsWith('global')),
      ) ?? 'env';
    const expectedOther = (present: Kind[], withSession: boolean): Kind | 'env' =>
      (['session*', 'global*'] as const).find(
        (k) => present.includes(k) && (withSession || k.startsWith('global')),
      ) ?? 'env';

    it.each(combos.map((c) => [c.join(' + ') || 'nothing', c]))('%s', async (_label, present) => {
      const caller = await createAccountCaller(t);
      const session = await createSession(t, { apiKey: caller.apiKey });
      const profiles: Partial<Record<Kind, ProfileJson>> = {};
      for (const kind of present as Kind[]) {
        const profile = await createProfile(t, caller.apiKey, {
          preset_name: kind,
          model_id: `model-${kind}`,
        });
        profiles[kind] = profile;
        await activateProfile(t, caller.apiKey, profile.id, {
          ...(kind.startsWith('session') ? { scope: 'session', session_id: session.id } : {}),
          instance_slot: kind.endsWith('N') ? 'narrator' : '*',
          params: { temperature: 0.1 * (KINDS.indexOf(kind) + 1) },
        });
      }
      for (const withSession of [true, false]) {
        const view = await runtime(caller, withSession ? session.id : undefined);
        expect(view.session_id).toBe(withSession ? session.id : null);
        for (const item of view.slots) {
          const want =
            item.slot === 'narrator'
              ? expectedNarrator(present as Kind[], withSession)
              : expectedOther(present as Kind[], withSession);
          if (want === 'env') {
            expect(item).toMatchObject({ source: 'env', profile_id: null, model_id: 'gpt-env' });
          } else {
            expect(item).toEqual({
              slot: item.slot,
              source: want.startsWith('session') ? 'session_profile' : 'global_profile',
              scope: want.startsWith('session') ? 'session' : 'global',
              profile_id: profiles[want]!.id,
              params: { temperature: 0.1 * (KINDS.indexOf(want) + 1) },
              preset_name: want,
              provider: 'openai',
              model_id: `model-${want}`,
            });
          }
        }
        // The turn resolver agrees with the runtime view.
        if (withSession) {
          const turn = (await resolver().execute(
            actorOf(caller),
            session.id,
            'narrator',
          )) as ResolvedTurnModel;
          const want = expectedNarrator(present as Kind[], true);
          expect(turn.source).toBe(
            want === 'env' ? 'env' : want.startsWith('session') ? 'session_profile' : 'global_profile',
          );
          expect(turn.target.model).toBe(want === 'env' ? 'gpt-env' : `model-${want}`);
        }
      }
    });
  });

  describe('undecryptable keys', () => {
    it('skips a binding whose key cannot be decrypted, falling back to global and finally env', async () => {
      const caller = await createAccountCaller(t);
      const session = await createSession(t, { apiKey: caller.apiKey });
      const global = await createProfile(t, caller.apiKey, { model_id: 'global-model' });
      const local = await createProfile(t, caller.apiKey, { model_id: 'session-model' });
      await activateProfile(t, caller.apiKey, global.id, {});
      await activateProfile(t, caller.apiKey, local.id, { scope: 'session', session_id: session.id });
      expect((await runtime(caller, session.id)).slots[0]).toMatchObject({ source: 'session_profile' });

      await tamperProfileKey(t, local.id);
      expect((await runtime(caller, session.id)).slots.every((s) => s.source === 'global_profile')).toBe(
        true,
      );
      const turn = (await resolver().execute(actorOf(caller), session.id, 'director')) as ResolvedTurnModel;
      expect(turn).toMatchObject({ source: 'global_profile', profile_id: global.id });
      expect(turn.warnings).toEqual([
        expect.objectContaining({
          code: 'secret_invalid_format',
          profile_id: local.id,
          binding_scope: 'session',
        }),
      ]);

      await tamperProfileKey(t, global.id);
      expect((await runtime(caller, session.id)).slots.every((s) => s.source === 'env')).toBe(true);
      const instances = await t.http
        .get(`/llm-instances/resolved?session_id=${session.id}`)
        .set('x-api-key', caller.apiKey);
      expect(instances.body.data.instances.every((i: { source: string }) => i.source === 'env')).toBe(true);
      expect(instances.body.data.warnings.map((w: { code: string }) => w.code)).toEqual([
        'secret_invalid_format',
        'secret_invalid_format',
      ]);
      // Read directly, the key is a 500.
      for (const route of ['discover', 'test']) {
        const res = await t.http
          .post(`/llm-profiles/models/${route}`)
          .set('x-api-key', caller.apiKey)
          .send({ profile_id: global.id });
        expect(res.status).toBe(500);
        expect(res.body.error.code).toBe('secret_invalid_format');
      }
      const direct = await resolver()
        .execute(actorOf(caller), session.id, '*', null, { profileId: global.id })
        .catch((e) => e);
      expect(direct).toMatchObject({ code: 'secret_invalid_format', status: 500 });
      // The profile itself is still readable.
      expect((await t.http.get(`/llm-profiles/${global.id}`).set('x-api-key', caller.apiKey)).status).toBe(
        200,
      );
    });

    it('skips every binding when the server has no master key (env answers)', async () => {
      const caller = await createAccountCaller(t);
      const p = await createProfile(t, caller.apiKey, { model_id: 'keyed' });
      await activateProfile(t, caller.apiKey, p.id, {});
      const noKey = await startTestApp({ env: ENV, database: t.database! });
      try {
        const res = await noKey.http.get('/llm-profiles/runtime').set('x-api-key', caller.apiKey);
        expect(res.status).toBe(200);
        expect(res.body.data.slots.every((s: { source: string }) => s.source === 'env')).toBe(true);
        const discover = await noKey.http
          .post('/llm-profiles/models/discover')
          .set('x-api-key', caller.apiKey)
          .send({ profile_id: p.id });
        expect(discover.status).toBe(503);
        expect(discover.body.error.code).toBe('secret_unavailable');
      } finally {
        await noKey.close();
      }
    });
  });

  describe('turn resolution', () => {
    let caller: Caller;
    let session: CreatedSession;
    const sessionKey = plainKey('session');
    const globalKey = plainKey('global');
    let globalProfile: ProfileJson;
    let sessionProfile: ProfileJson;

    beforeAll(async () => {
      caller = await createAccountCaller(t);
      session = await createSession(t, { apiKey: caller.apiKey });
      globalProfile = await createProfile(t, caller.apiKey, {
        provider: 'openai',
        model_id: 'global-model',
        base_url: fake.openaiBaseUrl,
        api_key: globalKey,
      });
      sessionProfile = await createProfile(t, caller.apiKey, {
        provider: 'anthropic',
        model_id: 'session-model',
        base_url: fake.anthropicBaseUrl,
        api_key: sessionKey,
      });
      await activateProfile(t, caller.apiKey, globalProfile.id, { params: { temperature: 0.3 } });
    });

    it('a session-scope binding changes what the model server receives', async () => {
      const llm = t.app.get<LlmClient>(LLM_CLIENT);
      const call = async () => {
        const turn = (await resolver().execute(actorOf(caller), session.id, 'narrator')) as ResolvedTurnModel;
        await llm.generate({
          target: turn.target,
          messages: [{ role: 'user', content: 'hi' }],
          params: {},
          stream: false,
        });
        return fake.requests.at(-1)!;
      };
      const before = await call();
      expect(before).toMatchObject({ protocol: 'openai', model: 'global-model' });
      expect(before.headers.authorization).toBe(`Bearer ${globalKey}`);

      await activateProfile(t, caller.apiKey, sessionProfile.id, {
        scope: 'session',
        session_id: session.id,
        instance_slot: 'narrator',
      });
      const after = await call();
      expect(after).toMatchObject({ protocol: 'anthropic', model: 'session-model' });
      expect(after.headers.authorization).toBe(`Bearer ${sessionKey}`);

      // Another slot of the same session still uses the global binding.
      const director = (await resolver().execute(
        actorOf(caller),
        session.id,
        'director',
      )) as ResolvedTurnModel;
      expect(director.target.model).toBe('global-model');

      const un = await t.http
        .delete(`/llm-profiles/bindings/narrator?scope=session&session_id=${session.id}`)
        .set('x-api-key', caller.apiKey);
      expect(un.status).toBe(200);
      expect((await call()).model).toBe('global-model');
    });

    it('puts binding params over the request’s generation_params; a binding null removes the field', async () => {
      await activateProfile(t, caller.apiKey, globalProfile.id, {
        instance_slot: 'memory',
        params: { temperature: 0.2, top_p: null, max_retries: 2 },
      });
      const turn = (await resolver().execute(actorOf(caller), session.id, 'memory', {
        temperature: 1.1,
        top_p: 0.5,
        max_output_tokens: 64,
      })) as ResolvedTurnModel;
      expect(turn.params).toEqual({ temperature: 0.2, max_output_tokens: 64, max_retries: 2 });
      expect(turn.target).toEqual({
        provider: 'openai',
        model: 'global-model',
        baseUrl: fake.openaiBaseUrl,
        apiKey: globalKey,
      });
    });

    it('updates last_used_at of the profile used', async () => {
      const before = Date.now();
      await resolver().execute(actorOf(caller), session.id, 'verifier');
      const row = await profileRow(t, globalProfile.id);
      expect(row.last_used_at).toBeGreaterThanOrEqual(before);
      expect(row.updated_at).toBe(globalProfile.updated_at);
      const res = await t.http.get(`/llm-profiles/${globalProfile.id}`).set('x-api-key', caller.apiKey);
      expect(res.body.data.last_used_at).toBe(row.last_used_at);
    });

    it('uses the Project override below a session binding and above a global one', async () => {
      const other = await createAccountCaller(t);
      const s = await createSession(t, { apiKey: other.apiKey });
      const g = await createProfile(t, other.apiKey, { model_id: 'g' });
      const base = await createProfile(t, other.apiKey, { model_id: 'base' });
      const local = await createProfile(t, other.apiKey, { model_id: 'local' });
      await activateProfile(t, other.apiKey, g.id, {});
      const put = await t.http
        .put(`/projects/${s.projectId}/settings/llm-profile-override`)
        .set('x-api-key', other.apiKey)
        .send({
          base_profile_id: base.id,
          override_json: { model_id: 'tuned', params: { top_k: 5, temperature: null } },
        });
      expect(put.status).toBe(200);
      const viaOverride = (await resolver().execute(actorOf(other), s.id, 'narrator', {
        temperature: 0.9,
      })) as ResolvedTurnModel;
      expect(viaOverride).toMatchObject({
        source: 'project_override',
        scope: 'project',
        profile_id: base.id,
      });
      expect(viaOverride.target.model).toBe('tuned');
      expect(viaOverride.params).toEqual({ top_k: 5 });
      const instances = await t.http
        .get(`/llm-instances/resolved?session_id=${s.id}`)
        .set('x-api-key', other.apiKey);
      expect(instances.body.data).toMatchObject({ session_id: s.id, project_id: s.projectId });
      expect(instances.body.data.instances[0]).toMatchObject({
        slot: '*',
        status: 'ready',
        source: 'project_override',
        model_id: 'tuned',
        api_key_masked: base.api_key_masked,
      });
      // The runtime view keeps spec 2's three sources.
      expect((await runtime(other, s.id)).slots[0]).toMatchObject({
        source: 'global_profile',
        profile_id: g.id,
      });

      await activateProfile(t, other.apiKey, local.id, { scope: 'session', session_id: s.id });
      const viaSession = (await resolver().execute(actorOf(other), s.id, 'narrator')) as ResolvedTurnModel;
      expect(viaSession).toMatchObject({ source: 'session_profile', profile_id: local.id });
    });

    it('a turn uses the binding params written at the top level of override_json (params wins on the same name)', async () => {
      const other = await createAccountCaller(t);
      const s = await createSession(t, { apiKey: other.apiKey });
      const base = await createProfile(t, other.apiKey, { model_id: 'base' });
      const put = await t.http
        .put(`/projects/${s.projectId}/settings/llm-profile-override`)
        .set('x-api-key', other.apiKey)
        .send({
          base_profile_id: base.id,
          override_json: { temperature: 0.3, top_k: 2, note: 'kept', params: { top_k: 5 } },
        });
      expect(put.status).toBe(200);
      const resolved = (await resolver().execute(actorOf(other), s.id, 'narrator')) as ResolvedTurnModel;
      expect(resolved).toMatchObject({ source: 'project_override', profile_id: base.id });
      expect(resolved.params).toEqual({ temperature: 0.3, top_k: 5 });
      const instances = await t.http
        .get(`/llm-instances/resolved?session_id=${s.id}`)
        .set('x-api-key', other.apiKey);
      expect(instances.body.data.instances[0]).toMatchObject({
        source: 'project_override',
        params: { temperature: 0.3, top_k: 5 },
      });
    });

    it('refuses a slot bound to a disabled profile (409 instance_slot_disabled_required), or reports it disabled', async () => {
      const other = await createAccountCaller(t);
      const s = await createSession(t, { apiKey: other.apiKey });
      const p = await createProfile(t, other.apiKey, { model_id: 'off' });
      await activateProfile(t, other.apiKey, p.id, { instance_slot: 'verifier' });
      await t.http
        .patch(`/llm-profiles/${p.id}`)
        .set('x-api-key', other.apiKey)
        .send({ status: 'disabled' })
        .expect(200);
      const error = await resolver()
        .execute(actorOf(other), s.id, 'verifier')
        .catch((e) => e);
      expect(error).toMatchObject({ code: 'instance_slot_disabled_required', status: 409 });
      expect(error.details).toMatchObject({ slot: 'verifier', profile_id: p.id });
      const optional = await resolver().execute(actorOf(other), s.id, 'verifier', null, { required: false });
      expect(optional).toMatchObject({ status: 'disabled', slot: 'verifier', profile_id: p.id });
      // Other slots are not affected.
      expect(await resolver().execute(actorOf(other), s.id, 'narrator')).toMatchObject({
        status: 'ready',
        source: 'env',
      });
      // The runtime view shows the binding; instances mark it disabled.
      expect((await runtime(other, s.id)).slots[3]).toMatchObject({ slot: 'verifier', profile_id: p.id });
      const instances = await t.http.get(`/llm-instances/resolved`).set('x-api-key', other.apiKey);
      expect(instances.body.data.instances[3]).toMatchObject({ slot: 'verifier', status: 'disabled' });
      expect((await profileRow(t, p.id)).last_used_at).toBeNull();
    });

    it('a profile named by the request: 404 profile_not_found, 409 profile_disabled, else used', async () => {
      const other = await createAccountCaller(t);
      const s = await createSession(t, { apiKey: other.apiKey });
      const p = await createProfile(t, other.apiKey, { model_id: 'named' });
      const turn = await resolver().execute(
        actorOf(other),
        s.id,
        'narrator',
        { temperature: 1 },
        { profileId: p.id },
      );
      expect(turn).toMatchObject({
        status: 'ready',
        source: 'request_profile',
        profile_id: p.id,
        params: { temperature: 1 },
      });
      for (const id of ['llmp_missing', globalProfile.id]) {
        const error = await resolver()
          .execute(actorOf(other), s.id, 'narrator', null, { profileId: id })
          .catch((e) => e);
        expect(error).toMatchObject({ code: 'profile_not_found', status: 404 });
      }
      await t.http
        .patch(`/llm-profiles/${p.id}`)
        .set('x-api-key', other.apiKey)
        .send({ status: 'disabled' })
        .expect(200);
      const disabled = await resolver()
        .execute(actorOf(other), s.id, 'narrator', null, { profileId: p.id })
        .catch((e) => e);
      expect(disabled).toMatchObject({ code: 'profile_disabled', status: 409 });
    });

    it('a session of another account is 404 not_found', async () => {
      const other = await createAccountCaller(t);
      const error = await resolver()
        .execute(actorOf(other), session.id, 'narrator')
        .catch((e) => e);
      expect(error).toMatchObject({ code: 'not_found', status: 404 });
    });
  });

  it('503 model_not_configured when nothing is bound and no LLM_* env is set', async () => {
    const bare = await startTestApp({ env: { APP_SECRETS_MASTER_KEY: MASTER } });
    try {
      const caller = await createAccountCaller(bare);
      const s = await createSession(bare, { apiKey: caller.apiKey });
      const error = await bare.app
        .get(ResolveModelForTurnUseCase)
        .execute(actorOf(caller), s.id, 'narrator')
        .catch((e) => e);
      expect(error).toMatchObject({ code: 'model_not_configured', status: 503 });
      const instances = await bare.http.get('/llm-instances/resolved').set('x-api-key', caller.apiKey);
      expect(
        instances.body.data.instances.every((i: { status: string }) => i.status === 'unconfigured'),
      ).toBe(true);
    } finally {
      await bare.close();
    }
  });

  it('never puts a plain key in the runtime or instance views or the logs', async () => {
    const key = plainKey('views');
    const caller = await createAccountCaller(t);
    const s = await createSession(t, { apiKey: caller.apiKey });
    const p = await createProfile(t, caller.apiKey, { api_key: key });
    await activateProfile(t, caller.apiKey, p.id, { scope: 'session', session_id: s.id });
    await resolver().execute(actorOf(caller), s.id, 'narrator');
    const texts = [
      (await t.http.get(`/llm-profiles/runtime?session_id=${s.id}`).set('x-api-key', caller.apiKey)).text,
      (await t.http.get(`/llm-instances/resolved?session_id=${s.id}`).set('x-api-key', caller.apiKey)).text,
      (await t.http.get(`/sessions/${s.id}/effective-config`).set('x-api-key', caller.apiKey)).text,
      t.logs.join('\n'),
    ];
    expect(texts[1]).toContain(p.api_key_masked);
    for (const text of texts) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(ENV.LLM_API_KEY);
    }
  });
});
