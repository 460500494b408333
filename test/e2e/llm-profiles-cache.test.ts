import { ResolveModelForTurnUseCase, type ResolvedTurnModel } from '@hearth/app';
import { llmBindingsRepository } from '@hearth/persistence';
import type { Actor } from '@hearth/permissions';
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

const ENV = {
  LLM_PROVIDER: 'openai',
  LLM_MODEL: 'gpt-env',
  LLM_BASE_URL: 'https://llm.example.com/v1',
  LLM_API_KEY: 'sk-env-secret-0123456789',
};

const actorOf = (caller: Caller): Actor => ({
  kind: 'account',
  accountId: caller.accountId,
  accountRole: 'user',
  clientId: caller.clientId,
  clientIsDefault: true,
});

/**
 * The per-process cache of turn slot resolutions (docs/decisions.md "Model profiles: resolution
 * cache"): a cached slot answers like a cold one, and every kind of write (profile PATCH, disable,
 * delete, activate, unbind, Project override PUT) makes the next resolution read again, on the
 * instance that wrote and on another instance on the same database. `last_used_at` is set by the cold
 * statement and at most once per interval by cached ones.
 */
describe('LLM resolution cache', () => {
  const MASTER = newMasterKey();
  let a: TestApp;
  let b: TestApp;
  let coldLoads: jest.SpiedFunction<typeof llmBindingsRepository.loadTurnResolution>;

  beforeAll(async () => {
    const env = { ...ENV, APP_SECRETS_MASTER_KEY: MASTER };
    a = await startTestApp({ env });
    b = await startTestApp({ env, database: a.database! });
  }, 60_000);
  afterAll(async () => {
    await b.close();
    await a.close();
  });
  beforeEach(() => {
    coldLoads = jest.spyOn(llmBindingsRepository, 'loadTurnResolution');
  });
  afterEach(() => coldLoads.mockRestore());

  const resolverOf = (t: TestApp) => t.app.get(ResolveModelForTurnUseCase);
  const resolve = (
    t: TestApp,
    caller: Caller,
    sessionId: string,
    slot: 'narrator' | 'director' | '*' = 'narrator',
    params: Record<string, unknown> | null = null,
  ) => resolverOf(t).execute(actorOf(caller), sessionId, slot, params) as Promise<ResolvedTurnModel>;
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected the resolution to fail');
      },
      (error: unknown) => error as { code: string; status: number },
    );
  const version = async (accountId: string) => {
    const row = await a.resources.database.db
      .selectFrom('llm_resolution_versions')
      .select('version')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row?.version ?? 0;
  };

  interface Fixture {
    caller: Caller;
    session: CreatedSession;
    global: ProfileJson;
    local: ProfileJson;
  }
  /** An account with a global `*` binding and an unbound second profile. */
  const fixture = async (): Promise<Fixture> => {
    const caller = await createAccountCaller(a);
    const session = await createSession(a, { apiKey: caller.apiKey });
    const global = await createProfile(a, caller.apiKey, { model_id: 'global-model' });
    const local = await createProfile(a, caller.apiKey, { model_id: 'local-model' });
    await activateProfile(a, caller.apiKey, global.id, { params: { temperature: 0.4, top_p: null } });
    return { caller, session, global, local };
  };

  it('answers a cached slot exactly like the cold resolution, with one cold read', async () => {
    const { caller, session, global } = await fixture();
    const cold = await resolve(a, caller, session.id, 'narrator', { temperature: 1, top_p: 0.5 });
    expect(coldLoads).toHaveBeenCalledTimes(1);
    const cached = await resolve(a, caller, session.id, 'narrator', { temperature: 1, top_p: 0.5 });
    expect(coldLoads).toHaveBeenCalledTimes(1);
    expect(cached).toEqual(cold);
    expect(cold).toMatchObject({
      status: 'ready',
      source: 'global_profile',
      profile_id: global.id,
      params: { temperature: 0.4 },
    });
    // The request's params are merged per call, not cached.
    const other = await resolve(a, caller, session.id, 'narrator', { max_output_tokens: 32 });
    expect(other.params).toEqual({ temperature: 0.4, max_output_tokens: 32 });
    expect(coldLoads).toHaveBeenCalledTimes(1);
    // Slots are cached separately; clearing the cache makes the next resolution cold.
    await resolve(a, caller, session.id, 'director');
    expect(coldLoads).toHaveBeenCalledTimes(2);
    resolverOf(a).cache.clear();
    expect(await resolve(a, caller, session.id, 'narrator', { temperature: 1, top_p: 0.5 })).toEqual(cold);
    expect(coldLoads).toHaveBeenCalledTimes(3);
  });

  it('keeps the warnings of skipped bindings in cached answers (a fresh array each time)', async () => {
    const { caller, session, global, local } = await fixture();
    await activateProfile(a, caller.apiKey, local.id, { scope: 'session', session_id: session.id });
    await tamperProfileKey(a, local.id);
    const first = await resolve(a, caller, session.id);
    expect(first).toMatchObject({ source: 'global_profile', profile_id: global.id });
    expect(first.warnings).toEqual([
      expect.objectContaining({ code: 'secret_invalid_format', profile_id: local.id }),
    ]);
    first.warnings.push({ code: 'x', message: 'caller mutation' });
    const second = await resolve(a, caller, session.id);
    expect(second.warnings).toHaveLength(1);
    expect(coldLoads).toHaveBeenCalledTimes(1);
    // The slot resolved elsewhere than the statement expected: the profile used is still marked.
    expect((await profileRow(a, global.id)).last_used_at).not.toBeNull();
  });

  /** Each kind of write, done on `writer`, seen by a resolution on `reader` that had the slot cached. */
  const writes: Array<{
    name: string;
    write: (t: TestApp, f: Fixture) => Promise<void>;
    expectAfter: (f: Fixture, reader: TestApp) => Promise<void>;
  }> = [
    {
      name: 'profile PATCH (model_id)',
      write: async (t, f) => {
        await t.http
          .patch(`/llm-profiles/${f.global.id}`)
          .set('x-api-key', f.caller.apiKey)
          .send({ model_id: 'renamed-model' })
          .expect(200);
      },
      expectAfter: async (f, reader) => {
        expect((await resolve(reader, f.caller, f.session.id)).target.model).toBe('renamed-model');
      },
    },
    {
      name: 'profile PATCH (new api_key)',
      write: async (t, f) => {
        await t.http
          .patch(`/llm-profiles/${f.global.id}`)
          .set('x-api-key', f.caller.apiKey)
          .send({ api_key: 'sk-replaced-key-0123456789abcdef' })
          .expect(200);
      },
      expectAfter: async (f, reader) => {
        expect((await resolve(reader, f.caller, f.session.id)).target.apiKey).toBe(
          'sk-replaced-key-0123456789abcdef',
        );
      },
    },
    {
      name: 'profile disable',
      write: async (t, f) => {
        await t.http
          .patch(`/llm-profiles/${f.global.id}`)
          .set('x-api-key', f.caller.apiKey)
          .send({ status: 'disabled' })
          .expect(200);
      },
      expectAfter: async (f, reader) => {
        expect(await failure(resolve(reader, f.caller, f.session.id))).toMatchObject({
          code: 'instance_slot_disabled_required',
          status: 409,
        });
      },
    },
    {
      name: 'activate (a session binding)',
      write: async (t, f) => {
        await activateProfile(t, f.caller.apiKey, f.local.id, {
          scope: 'session',
          session_id: f.session.id,
          instance_slot: 'narrator',
        });
      },
      expectAfter: async (f, reader) => {
        expect(await resolve(reader, f.caller, f.session.id)).toMatchObject({
          source: 'session_profile',
          profile_id: f.local.id,
        });
      },
    },
    {
      name: 'activate (new params on the same binding)',
      write: async (t, f) => {
        await activateProfile(t, f.caller.apiKey, f.global.id, { params: { temperature: 1.5 } });
      },
      expectAfter: async (f, reader) => {
        expect((await resolve(reader, f.caller, f.session.id)).params).toEqual({ temperature: 1.5 });
      },
    },
    {
      name: 'unbind',
      write: async (t, f) => {
        await t.http
          .delete('/llm-profiles/bindings/*?scope=global')
          .set('x-api-key', f.caller.apiKey)
          .expect(200);
      },
      expectAfter: async (f, reader) => {
        expect(await resolve(reader, f.caller, f.session.id)).toMatchObject({
          source: 'env',
          profile_id: null,
        });
      },
    },
    {
      name: 'Project override PUT',
      write: async (t, f) => {
        await t.http
          .put(`/projects/${f.session.projectId}/settings/llm-profile-override`)
          .set('x-api-key', f.caller.apiKey)
          .send({ base_profile_id: f.local.id, override_json: { model_id: 'tuned' } })
          .expect(200);
      },
      expectAfter: async (f, reader) => {
        expect(await resolve(reader, f.caller, f.session.id)).toMatchObject({
          source: 'project_override',
          profile_id: f.local.id,
          target: expect.objectContaining({ model: 'tuned' }),
        });
      },
    },
  ];

  describe.each([
    ['on the same instance', () => a],
    ['from a second API instance', () => b],
  ])('invalidation %s', (_label, writerOf) => {
    it.each(writes.map((w) => [w.name, w]))('%s', async (_name, w) => {
      const f = await fixture();
      const before = await resolve(a, f.caller, f.session.id);
      expect(before).toMatchObject({ source: 'global_profile', profile_id: f.global.id });
      await resolve(a, f.caller, f.session.id);
      expect(coldLoads).toHaveBeenCalledTimes(1);
      const v = await version(f.caller.accountId);
      await w.write(writerOf(), f);
      expect(await version(f.caller.accountId)).toBe(v + 1);
      await w.expectAfter(f, a);
      expect(coldLoads).toHaveBeenCalledTimes(2);
    });

    it('profile DELETE', async () => {
      const f = await fixture();
      // A profile can only be deleted unbound: resolve with it unbound and cached, then delete it.
      await a.http
        .delete('/llm-profiles/bindings/*?scope=global')
        .set('x-api-key', f.caller.apiKey)
        .expect(200);
      await activateProfile(a, f.caller.apiKey, f.local.id, {});
      expect(await resolve(a, f.caller, f.session.id)).toMatchObject({ profile_id: f.local.id });
      expect(coldLoads).toHaveBeenCalledTimes(1);
      const v = await version(f.caller.accountId);
      await writerOf()
        .http.delete(`/llm-profiles/${f.global.id}`)
        .set('x-api-key', f.caller.apiKey)
        .expect(200);
      expect(await version(f.caller.accountId)).toBe(v + 1);
      expect(await resolve(a, f.caller, f.session.id)).toMatchObject({ profile_id: f.local.id });
      expect(coldLoads).toHaveBeenCalledTimes(2);
    });
  });

  it('a failed write leaves the version and the cached slot as they were', async () => {
    const f = await fixture();
    await resolve(a, f.caller, f.session.id);
    const v = await version(f.caller.accountId);
    const conflict = await a.http
      .patch(`/llm-profiles/${f.global.id}`)
      .set('x-api-key', f.caller.apiKey)
      .send({ preset_name: f.local.preset_name });
    expect([conflict.status, conflict.body.error.code]).toEqual([409, 'profile_conflict']);
    const inUse = await a.http.delete(`/llm-profiles/${f.global.id}`).set('x-api-key', f.caller.apiKey);
    expect([inUse.status, inUse.body.error.code]).toEqual([409, 'profile_in_use']);
    const noop = await a.http
      .patch(`/llm-profiles/${f.global.id}`)
      .set('x-api-key', f.caller.apiKey)
      .send({ model_id: 'global-model' });
    expect(noop.status).toBe(200);
    expect(await version(f.caller.accountId)).toBe(v);
    await resolve(a, f.caller, f.session.id);
    expect(coldLoads).toHaveBeenCalledTimes(1);
  });

  it('versions are per account: another account’s write does not invalidate', async () => {
    const f = await fixture();
    const g = await fixture();
    await resolve(a, f.caller, f.session.id);
    await activateProfile(a, g.caller.apiKey, g.local.id, {});
    await resolve(a, f.caller, f.session.id);
    expect(coldLoads).toHaveBeenCalledTimes(1);
  });

  it('answers 404 not_found for another account’s session, cached for its owner or not', async () => {
    const f = await fixture();
    const stranger = await createAccountCaller(a);
    expect(await failure(resolve(a, stranger, f.session.id))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    await resolve(a, f.caller, f.session.id);
    expect(await failure(resolve(a, stranger, f.session.id))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    expect(await failure(resolve(a, f.caller, 'ses_missing'))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });

  it('answers 404 once the session is deleted, even with the slot cached', async () => {
    const f = await fixture();
    await resolve(a, f.caller, f.session.id);
    await b.http.delete(`/sessions/${f.session.id}`).set('x-api-key', f.caller.apiKey).expect(200);
    expect(await failure(resolve(a, f.caller, f.session.id))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    expect(coldLoads).toHaveBeenCalledTimes(1);
  });

  it('503 model_not_configured and the disabled answer come from cached slots too', async () => {
    const bare = await startTestApp({ env: { APP_SECRETS_MASTER_KEY: MASTER }, database: a.database! });
    try {
      const caller = await createAccountCaller(bare);
      const s = await createSession(bare, { apiKey: caller.apiKey });
      for (let i = 0; i < 2; i++)
        expect(await failure(resolve(bare, caller, s.id))).toMatchObject({
          code: 'model_not_configured',
          status: 503,
        });
      const p = await createProfile(bare, caller.apiKey, {});
      await activateProfile(bare, caller.apiKey, p.id, {});
      await bare.http
        .patch(`/llm-profiles/${p.id}`)
        .set('x-api-key', caller.apiKey)
        .send({ status: 'disabled' });
      for (let i = 0; i < 2; i++)
        expect(
          await resolverOf(bare).execute(actorOf(caller), s.id, 'narrator', null, { required: false }),
        ).toMatchObject({ status: 'disabled', profile_id: p.id });
      expect(coldLoads).toHaveBeenCalledTimes(2);
      expect((await profileRow(bare, p.id)).last_used_at).toBeNull();
    } finally {
      await bare.close();
    }
  });

  describe('last_used_at', () => {
    const setLastUsed = (id: string, value: number | null) =>
      a.resources.database.db
        .updateTable('llm_profiles')
        .set({ last_used_at: value })
        .where('id', '=', id)
        .execute();

    it('is set by the cold resolution, then at most once per interval by cached ones', async () => {
      const f = await fixture();
      const t0 = Date.now();
      await resolve(a, f.caller, f.session.id);
      const first = (await profileRow(a, f.global.id)).last_used_at!;
      expect(first).toBeGreaterThanOrEqual(t0);
      // Cached within the interval: no write.
      await setLastUsed(f.global.id, first - 1000);
      await resolve(a, f.caller, f.session.id);
      expect((await profileRow(a, f.global.id)).last_used_at).toBe(first - 1000);
      // Older than the interval: the cached resolution writes it again.
      await setLastUsed(f.global.id, first - 61_000);
      const t1 = Date.now();
      await resolve(a, f.caller, f.session.id);
      expect((await profileRow(a, f.global.id)).last_used_at).toBeGreaterThanOrEqual(t1);
      expect(coldLoads).toHaveBeenCalledTimes(1);
      // updated_at is not touched by use.
      expect((await profileRow(a, f.global.id)).updated_at).toBe(f.global.updated_at);
    });

    it('is not set for a profile other than the one used, nor when env answers', async () => {
      const f = await fixture();
      await activateProfile(a, f.caller.apiKey, f.local.id, { instance_slot: 'director' });
      await resolve(a, f.caller, f.session.id, 'director');
      expect((await profileRow(a, f.local.id)).last_used_at).not.toBeNull();
      expect((await profileRow(a, f.global.id)).last_used_at).toBeNull();
      await a.http
        .delete('/llm-profiles/bindings/*?scope=global')
        .set('x-api-key', f.caller.apiKey)
        .expect(200);
      await resolve(a, f.caller, f.session.id, 'narrator');
      expect((await profileRow(a, f.global.id)).last_used_at).toBeNull();
    });
  });

  it('works on the embedded adapters (PGlite)', async () => {
    const e = await startTestApp({ embedded: true, env: { ...ENV, APP_SECRETS_MASTER_KEY: MASTER } });
    try {
      const caller = await createAccountCaller(e);
      const s = await createSession(e, { apiKey: caller.apiKey });
      const key = plainKey('embedded');
      const p = await createProfile(e, caller.apiKey, { model_id: 'emb', api_key: key });
      await activateProfile(e, caller.apiKey, p.id, { scope: 'session', session_id: s.id });
      const cold = await resolve(e, caller, s.id);
      expect(cold).toMatchObject({ source: 'session_profile', profile_id: p.id });
      expect(cold.target.apiKey).toBe(key);
      expect(await resolve(e, caller, s.id)).toEqual(cold);
      await e.http
        .patch(`/llm-profiles/${p.id}`)
        .set('x-api-key', caller.apiKey)
        .send({ model_id: 'emb2' })
        .expect(200);
      expect((await resolve(e, caller, s.id)).target.model).toBe('emb2');
      expect(coldLoads).toHaveBeenCalledTimes(2);
      expect((await profileRow(e, p.id)).last_used_at).not.toBeNull();
    } finally {
      await e.close();
    }
  });
});
