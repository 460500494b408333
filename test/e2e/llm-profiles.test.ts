import { SecretBox } from '@hearth/platform';
import {
  accountBindings,
  accountLogRows,
  accountProfileRows,
  activateProfile,
  createProfile,
  newMasterKey,
  plainKey,
  profileRow,
  sessionBindings,
} from '../support/factories/llm-profiles';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { createLlmProfile } from '../support/factories/settings';
import { createSession } from '../support/factories/sessions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The `/llm-profiles` routes of spec 2 (docs/decisions.md "Model profiles"): fields, limits, states,
 * bindings, every error code of the CRUD and binding routes, isolation between accounts, operation
 * logs, and a key that never leaves the server in plain text.
 */
describe('LLM profiles', () => {
  const MASTER = newMasterKey();
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let side: Caller;
  /** Every plain key sent, and every response body seen: the last test looks for the keys in them. */
  const keys: string[] = [];
  const bodies: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      env: { APP_SECRETS_MASTER_KEY: MASTER, ALLOW_PRIVATE_BASE_URL: 'true', LOG_LEVEL: 'debug' },
    });
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
    side = await createClientCaller(t, owner.accountId, 'Side client');
  });
  afterAll(async () => {
    await t.close();
  });

  const call = async (
    method: 'get' | 'post' | 'patch' | 'delete' | 'put',
    path: string,
    body?: object,
    apiKey = owner.apiKey,
  ) => {
    let req = t.http[method](path).set('x-api-key', apiKey);
    if (body !== undefined) req = req.send(body);
    const res = await req;
    bodies.push(res.text);
    return res;
  };
  const newProfile = async (body: Record<string, unknown> = {}, caller = owner) => {
    const apiKey = (body.api_key as string | undefined) ?? plainKey('made');
    keys.push(apiKey);
    const profile = await createProfile(t, caller.apiKey, { ...body, api_key: apiKey });
    bodies.push(JSON.stringify(profile));
    return profile;
  };
  const validBody = (extra: Record<string, unknown> = {}) => {
    const apiKey = plainKey('body');
    keys.push(apiKey);
    return {
      preset_name: `Preset ${Math.random().toString(36).slice(2)}`,
      provider: 'openai',
      model_id: 'gpt-x',
      api_key: apiKey,
      ...extra,
    };
  };

  describe('create', () => {
    it('creates an active profile, answering the key only masked, storing it encrypted', async () => {
      const apiKey = plainKey('create');
      keys.push(apiKey);
      const res = await call('post', '/llm-profiles', {
        preset_name: 'Writer',
        provider: 'anthropic',
        model_id: 'claude-x',
        api_key: apiKey,
        base_url: 'https://anthropic.example.com',
        api_key_name: 'work key',
      });
      expect(res.status).toBe(201);
      const data = res.body.data;
      expect(Object.keys(data).sort()).toEqual(
        [
          'api_key_masked',
          'api_key_name',
          'base_url',
          'created_at',
          'id',
          'last_used_at',
          'model_id',
          'preset_name',
          'provider',
          'status',
          'updated_at',
        ].sort(),
      );
      expect(data).toMatchObject({
        preset_name: 'Writer',
        provider: 'anthropic',
        model_id: 'claude-x',
        base_url: 'https://anthropic.example.com',
        api_key_name: 'work key',
        api_key_masked: `${apiKey.slice(0, 3)}...${apiKey.slice(-4)}`,
        status: 'active',
        last_used_at: null,
      });
      expect(data.id).toMatch(/^llmp_/);
      expect(data.created_at).toBe(data.updated_at);
      const row = await profileRow(t, data.id);
      expect(row.api_key_ciphertext).not.toContain(apiKey);
      expect(row.api_key_ciphertext).toMatch(/^v1\./);
      expect(new SecretBox(Buffer.from(MASTER, 'base64')).decrypt(row.api_key_ciphertext)).toBe(apiKey);
      expect(row.account_id).toBe(owner.accountId);
    });

    it('defaults base_url and api_key_name to null; masks short keys completely', async () => {
      const res = await call('post', '/llm-profiles', { ...validBody(), api_key: 'short-key' });
      keys.push('short-key');
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ base_url: null, api_key_name: null, api_key_masked: '****' });
    });

    it.each([
      ['api_key missing', { api_key: undefined }],
      ['preset_name missing', { preset_name: undefined }],
      ['model_id missing', { model_id: undefined }],
      ['provider missing', { provider: undefined }],
      ['an unknown provider', { provider: 'mistral' }],
      ['a blank preset_name', { preset_name: '   ' }],
      ['preset_name of 121 characters', { preset_name: 'p'.repeat(121) }],
      ['model_id of 201 characters', { model_id: 'm'.repeat(201) }],
      ['api_key_name of 121 characters', { api_key_name: 'n'.repeat(121) }],
      ['an api_key of 4097 characters', { api_key: 'k'.repeat(4097) }],
      ['an api_key with whitespace', { api_key: 'sk-abc def-0123456789' }],
      ['a base_url of 2001 characters', { base_url: `https://e.com/${'a'.repeat(2001 - 14)}` }],
      ['a base_url that is not a URL', { base_url: 'not a url' }],
      ['allow_private_network (not accepted on create)', { allow_private_network: true }],
      ['an unknown field', { temperature: 1 }],
    ])('refuses %s with 400 validation_error', async (_label, patch) => {
      const before = (await accountProfileRows(t, owner.accountId)).length;
      const res = await call('post', '/llm-profiles', { ...validBody(), ...patch });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect((await accountProfileRows(t, owner.accountId)).length).toBe(before);
    });

    it('accepts every limit exactly', async () => {
      const res = await call('post', '/llm-profiles', {
        ...validBody(),
        preset_name: 'p'.repeat(120),
        model_id: 'm'.repeat(200),
        api_key_name: 'n'.repeat(120),
        api_key: `sk-${'k'.repeat(4093)}`,
        base_url: `https://e.com/${'a'.repeat(2000 - 14)}`,
      });
      keys.push(`sk-${'k'.repeat(4093)}`);
      expect(res.status).toBe(201);
      expect(res.body.data.base_url).toHaveLength(2000);
    });

    it('refuses a preset_name used by another non-deleted profile of the account: 409 profile_conflict', async () => {
      await newProfile({ preset_name: 'Twice' });
      const res = await call('post', '/llm-profiles', validBody({ preset_name: 'Twice' }));
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('profile_conflict');
      // Another account may use the name.
      expect(
        (await call('post', '/llm-profiles', validBody({ preset_name: 'Twice' }), other.apiKey)).status,
      ).toBe(201);
    });

    it('lets exactly one of several concurrent creates with one name succeed', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, () => call('post', '/llm-profiles', validBody({ preset_name: 'Raced' }))),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      const rows = (await accountProfileRows(t, owner.accountId)).filter((r) => r.preset_name === 'Raced');
      expect(rows).toHaveLength(1);
    });

    it('lets the name be reused once the profile holding it is deleted', async () => {
      const first = await newProfile({ preset_name: 'Reused' });
      expect((await call('delete', `/llm-profiles/${first.id}`)).status).toBe(200);
      const res = await call('post', '/llm-profiles', validBody({ preset_name: 'Reused' }));
      expect(res.status).toBe(201);
      expect(res.body.data.id).not.toBe(first.id);
    });

    it('lets every Client of the account create and read profiles', async () => {
      const made = await newProfile({}, side);
      const res = await call('get', `/llm-profiles/${made.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(made.id);
    });
  });

  describe('list and get', () => {
    let account: Caller;
    beforeAll(async () => {
      account = await createAccountCaller(t, { name: 'Lister' });
    });

    it('lists the account’s profiles oldest first, hiding deleted ones unless asked, with status filter', async () => {
      const a = await newProfile({ preset_name: 'A' }, account);
      const b = await newProfile({ preset_name: 'B' }, account);
      const c = await newProfile({ preset_name: 'C' }, account);
      expect(
        (await call('patch', `/llm-profiles/${b.id}`, { status: 'disabled' }, account.apiKey)).status,
      ).toBe(200);
      expect((await call('delete', `/llm-profiles/${c.id}`, undefined, account.apiKey)).status).toBe(200);

      const ids = async (query: string) => {
        const res = await call('get', `/llm-profiles${query}`, undefined, account.apiKey);
        expect(res.status).toBe(200);
        return res.body.data.map((p: { id: string }) => p.id);
      };
      expect(await ids('')).toEqual([a.id, b.id]);
      expect(await ids('?include_deleted=false')).toEqual([a.id, b.id]);
      expect(await ids('?include_deleted=true')).toEqual([a.id, b.id, c.id]);
      expect(await ids('?include_deleted=1')).toEqual([a.id, b.id, c.id]);
      expect(await ids('?include_deleted=0')).toEqual([a.id, b.id]);
      expect(await ids('?status=disabled')).toEqual([b.id]);
      expect(await ids('?status=active')).toEqual([a.id]);
      expect(await ids('?status=deleted')).toEqual([c.id]);
      const res = await call('get', '/llm-profiles?include_deleted=true', undefined, account.apiKey);
      expect(res.body.data[2]).toMatchObject({ status: 'deleted' });
      expect(res.body.data.every((p: Record<string, unknown>) => !('api_key' in p))).toBe(true);
    });

    it.each([['?include_deleted=maybe'], ['?status=gone'], ['?limit=5']])(
      'refuses %s with 400',
      async (query) => {
        const res = await call('get', `/llm-profiles${query}`, undefined, account.apiKey);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_error');
      },
    );

    it('gets a profile in any status, and 404 profile_not_found for unknown ids', async () => {
      const p = await newProfile({}, account);
      expect((await call('delete', `/llm-profiles/${p.id}`, undefined, account.apiKey)).status).toBe(200);
      const res = await call('get', `/llm-profiles/${p.id}`, undefined, account.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe('deleted');
      const missing = await call('get', '/llm-profiles/llmp_missing', undefined, account.apiKey);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('profile_not_found');
    });
  });

  describe('update', () => {
    it('needs at least one field', async () => {
      const p = await newProfile();
      const res = await call('patch', `/llm-profiles/${p.id}`, {});
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('changes fields, clears nullable ones, replaces the key, and logs llm_profile.update', async () => {
      const p = await newProfile({ base_url: 'https://one.example.com', api_key_name: 'old' });
      const newKey = plainKey('rotated');
      keys.push(newKey);
      const res = await call('patch', `/llm-profiles/${p.id}`, {
        preset_name: `${p.preset_name} renamed`,
        provider: 'deepseek',
        model_id: 'deepseek-chat',
        base_url: null,
        api_key_name: null,
        api_key: newKey,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: p.id,
        preset_name: `${p.preset_name} renamed`,
        provider: 'deepseek',
        model_id: 'deepseek-chat',
        base_url: null,
        api_key_name: null,
        api_key_masked: `${newKey.slice(0, 3)}...${newKey.slice(-4)}`,
      });
      expect(res.body.data.updated_at).toBeGreaterThanOrEqual(p.updated_at);
      const row = await profileRow(t, p.id);
      expect(new SecretBox(Buffer.from(MASTER, 'base64')).decrypt(row.api_key_ciphertext)).toBe(newKey);
      const log = (await accountLogRows(t, owner.accountId)).filter(
        (l) => l.action === 'llm_profile.update' && l.target_id === p.id,
      );
      expect(log).toHaveLength(1);
      expect(log[0].metadata).toMatchObject({ key_replaced: true });
    });

    it('moves active → disabled → active', async () => {
      const p = await newProfile();
      const off = await call('patch', `/llm-profiles/${p.id}`, { status: 'disabled' });
      expect(off.body.data.status).toBe('disabled');
      const on = await call('patch', `/llm-profiles/${p.id}`, { status: 'active' });
      expect(on.body.data.status).toBe('active');
    });

    it('writes nothing for a PATCH that changes nothing', async () => {
      const p = await newProfile({ model_id: 'same' });
      const logsBefore = (await accountLogRows(t, owner.accountId)).length;
      const res = await call('patch', `/llm-profiles/${p.id}`, { model_id: 'same', status: 'active' });
      expect(res.status).toBe(200);
      expect(res.body.data.updated_at).toBe(p.updated_at);
      expect((await accountLogRows(t, owner.accountId)).length).toBe(logsBefore);
    });

    it('refuses a name held by another profile (409 profile_conflict) and leaves the row unchanged', async () => {
      const a = await newProfile();
      const b = await newProfile();
      const res = await call('patch', `/llm-profiles/${b.id}`, {
        preset_name: a.preset_name,
        model_id: 'changed',
      });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('profile_conflict');
      expect((await profileRow(t, b.id)).model_id).toBe(b.model_id);
    });

    it('refuses to update a deleted profile: 409 profile_inactive', async () => {
      const p = await newProfile();
      await call('delete', `/llm-profiles/${p.id}`);
      const res = await call('patch', `/llm-profiles/${p.id}`, { status: 'active' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('profile_inactive');
    });

    it.each([
      ['status deleted', { status: 'deleted' }],
      ['a null api_key', { api_key: null }],
      ['a null preset_name', { preset_name: null }],
      ['a null status', { status: null }],
      ['a preset_name of 121 characters', { preset_name: 'x'.repeat(121) }],
      ['allow_private_network', { allow_private_network: true }],
    ])('refuses %s with 400 validation_error', async (_label, body) => {
      const p = await newProfile();
      const res = await call('patch', `/llm-profiles/${p.id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('404 profile_not_found for an unknown id', async () => {
      const res = await call('patch', '/llm-profiles/llmp_nothing', { model_id: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('profile_not_found');
    });
  });

  describe('activate and unbind', () => {
    let account: Caller;
    beforeAll(async () => {
      account = await createAccountCaller(t, { name: 'Binder' });
    });
    const bind = (id: string, body: object, key = account.apiKey) =>
      call('post', `/llm-profiles/${id}/activate`, body, key);

    it('binds globally to `*` by default', async () => {
      const p = await newProfile({}, account);
      const res = await bind(p.id, {});
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        profile_id: p.id,
        scope: 'global',
        scope_id: 'global',
        instance_slot: '*',
        params: null,
        activated: true,
      });
      const rows = await accountBindings(t, account.accountId);
      expect(rows).toHaveLength(1);
      expect(rows[0].id).toMatch(/^llmb_/);
      // Clean up for the next tests.
      expect((await call('delete', '/llm-profiles/bindings/*', undefined, account.apiKey)).status).toBe(200);
    });

    it('keeps params when omitted, clears them with null, replaces them with an object (nulls kept)', async () => {
      const p = await newProfile({}, account);
      const q = await newProfile({}, account);
      const first = await bind(p.id, {
        instance_slot: 'narrator',
        params: { temperature: 0.5, top_p: null },
      });
      expect(first.body.data.params).toEqual({ temperature: 0.5, top_p: null });
      const [row] = (await accountBindings(t, account.accountId)).filter(
        (b) => b.instance_slot === 'narrator',
      );

      const kept = await bind(q.id, { instance_slot: 'narrator' });
      expect(kept.body.data).toMatchObject({ profile_id: q.id, params: { temperature: 0.5, top_p: null } });
      const replaced = await bind(q.id, { instance_slot: 'narrator', params: { max_output_tokens: 100 } });
      expect(replaced.body.data.params).toEqual({ max_output_tokens: 100 });
      const cleared = await bind(q.id, { instance_slot: 'narrator', params: null });
      expect(cleared.body.data.params).toBeNull();

      const rows = (await accountBindings(t, account.accountId)).filter(
        (b) => b.instance_slot === 'narrator',
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].id).toBe(row.id);
      expect(rows[0].created_at).toBe(row.created_at);
      expect(rows[0].profile_id).toBe(q.id);
      expect(
        (await call('delete', '/llm-profiles/bindings/narrator', undefined, account.apiKey)).status,
      ).toBe(200);
    });

    it('accepts every binding param at its limits', async () => {
      const p = await newProfile({}, account);
      const params = {
        max_context_tokens: 1,
        max_output_tokens: 1,
        temperature: 2,
        top_p: 0,
        top_k: 0,
        frequency_penalty: -2,
        presence_penalty: 2,
        stream: false,
        timeout_ms: 1,
        max_retries: 10,
        reasoning_effort: 'high',
      };
      const res = await bind(p.id, { instance_slot: 'memory', params });
      expect(res.status).toBe(200);
      expect(res.body.data.params).toEqual(params);
      expect((await call('delete', '/llm-profiles/bindings/memory', undefined, account.apiKey)).status).toBe(
        200,
      );
    });

    it('accepts the other end of each two-sided range (max_retries 0, temperature 0, top_p 1, penalties)', async () => {
      const p = await newProfile({}, account);
      const params = {
        temperature: 0,
        top_p: 1,
        frequency_penalty: 2,
        presence_penalty: -2,
        max_retries: 0,
      };
      const res = await bind(p.id, { instance_slot: 'memory', params });
      expect(res.status).toBe(200);
      expect(res.body.data.params).toEqual(params);
      expect((await call('delete', '/llm-profiles/bindings/memory', undefined, account.apiKey)).status).toBe(
        200,
      );
    });

    it.each([
      ['temperature 2.01', { temperature: 2.01 }],
      ['top_p 1.5', { top_p: 1.5 }],
      ['top_k -1', { top_k: -1 }],
      ['max_retries 11', { max_retries: 11 }],
      ['max_retries -1', { max_retries: -1 }],
      ['max_retries 1.5', { max_retries: 1.5 }],
      ['frequency_penalty -2.5', { frequency_penalty: -2.5 }],
      ['stream "yes"', { stream: 'yes' }],
      ['reasoning_effort extreme', { reasoning_effort: 'extreme' }],
      ['max_output_tokens 0', { max_output_tokens: 0 }],
      ['an unknown param', { seed: 1 }],
      ['params a string', 'abc'],
      ['params an array', [1]],
      ['params a number', 5],
    ])('refuses %s with 400 invalid_params and binds nothing', async (_label, params) => {
      const p = await newProfile({}, account);
      const res = await bind(p.id, { instance_slot: 'director', params });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_params');
      expect(
        (await accountBindings(t, account.accountId)).filter((b) => b.instance_slot === 'director'),
      ).toHaveLength(0);
    });

    it.each([
      ['scope session without session_id', { scope: 'session' }],
      ['session_id with scope global', { session_id: 'ses_x' }],
      ['an unknown slot', { instance_slot: 'writer' }],
      ['an unknown scope', { scope: 'project' }],
    ])('refuses %s with 400 validation_error', async (_label, body) => {
      const p = await newProfile({}, account);
      const res = await bind(p.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('404 session_scope_not_found for a missing session or a session of another account', async () => {
      const p = await newProfile({}, account);
      const foreign = await createSession(t, { apiKey: other.apiKey });
      for (const sessionId of ['ses_missing', foreign.id]) {
        const res = await bind(p.id, { scope: 'session', session_id: sessionId });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('session_scope_not_found');
      }
      expect(await sessionBindings(t, foreign.id)).toHaveLength(0);
    });

    it('409 profile_inactive for a disabled or deleted profile; 404 profile_not_found for a missing one', async () => {
      const disabled = await newProfile({}, account);
      await call('patch', `/llm-profiles/${disabled.id}`, { status: 'disabled' }, account.apiKey);
      const deleted = await newProfile({}, account);
      await call('delete', `/llm-profiles/${deleted.id}`, undefined, account.apiKey);
      for (const p of [disabled, deleted]) {
        const res = await bind(p.id, {});
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('profile_inactive');
      }
      const missing = await bind('llmp_missing', {});
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('profile_not_found');
      expect(await accountBindings(t, account.accountId)).toHaveLength(0);
    });

    it('binds to a session and unbinds it; unbinding again is 404 binding_not_found', async () => {
      const p = await newProfile({}, account);
      const session = await createSession(t, { apiKey: account.apiKey });
      const res = await bind(p.id, { scope: 'session', session_id: session.id, instance_slot: 'verifier' });
      expect(res.body.data).toMatchObject({
        scope: 'session',
        scope_id: session.id,
        instance_slot: 'verifier',
      });
      const path = `/llm-profiles/bindings/verifier?scope=session&session_id=${session.id}`;
      const un = await call('delete', path, undefined, account.apiKey);
      expect(un.status).toBe(200);
      expect(un.body.data).toEqual({
        scope: 'session',
        scope_id: session.id,
        instance_slot: 'verifier',
        unbound: true,
      });
      const again = await call('delete', path, undefined, account.apiKey);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('binding_not_found');
      const global = await call('delete', '/llm-profiles/bindings/director', undefined, account.apiKey);
      expect(global.status).toBe(404);
      expect(global.body.error.code).toBe('binding_not_found');
    });

    it('concurrent unbinds of one binding: one 200, the others 404, one log', async () => {
      const racer = await createAccountCaller(t, { name: 'Unbind racer' });
      const p = await newProfile({}, racer);
      expect((await bind(p.id, { instance_slot: 'director' }, racer.apiKey)).status).toBe(200);
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          call('delete', '/llm-profiles/bindings/director', undefined, racer.apiKey),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, ...Array(9).fill(404)]);
      const logs = await t.resources.database.db
        .selectFrom('operation_logs')
        .select('action')
        .where('account_id', '=', racer.accountId)
        .where('action', '=', 'llm_profile.unbind')
        .execute();
      expect(logs).toHaveLength(1);
    });

    it('session-scoped activates racing the session delete: 200 or 404 session_scope_not_found, never 500', async () => {
      const racer = await createAccountCaller(t, { name: 'Delete racer' });
      const p = await newProfile({}, racer);
      for (let round = 0; round < 5; round++) {
        const session = await createSession(t, { apiKey: racer.apiKey });
        const slots = ['narrator', 'director', 'verifier', 'memory', '*'].flatMap((slot) => [slot, slot]);
        const results = await Promise.all([
          t.http.delete(`/sessions/${session.id}`).set('x-api-key', racer.apiKey),
          ...slots.map((slot) =>
            bind(p.id, { scope: 'session', session_id: session.id, instance_slot: slot }, racer.apiKey),
          ),
        ]);
        expect(results[0].status).toBe(200);
        for (const res of results.slice(1))
          expect(`${res.status} ${res.body.error?.code ?? ''}`).toMatch(
            /^(200 |404 session_scope_not_found)$/,
          );
        // Whatever landed went with the session.
        const left = await t.resources.database.db
          .selectFrom('llm_profile_bindings')
          .select('id')
          .where('session_id', '=', session.id)
          .execute();
        expect(left).toEqual([]);
      }
    });

    it.each([
      ['/llm-profiles/bindings/writer', 'validation_error', 400],
      ['/llm-profiles/bindings/*?scope=session', 'validation_error', 400],
      ['/llm-profiles/bindings/*?scope=global&session_id=ses_x', 'validation_error', 400],
      ['/llm-profiles/bindings/*?scope=session&session_id=ses_missing', 'session_scope_not_found', 404],
    ])('unbind %s answers %s', async (path, code, status) => {
      const res = await call('delete', path, undefined, account.apiKey);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
    });

    it('accepts the wildcard slot percent-encoded', async () => {
      const p = await newProfile({}, account);
      await bind(p.id, {});
      const res = await call('delete', '/llm-profiles/bindings/%2A', undefined, account.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data.instance_slot).toBe('*');
    });
  });

  describe('delete', () => {
    it('soft-deletes: 200 {id, deleted: true}, status deleted with deleted_at, logged once; again is a no-op', async () => {
      const p = await newProfile();
      const res = await call('delete', `/llm-profiles/${p.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: p.id, deleted: true });
      const row = await profileRow(t, p.id);
      expect(row.status).toBe('deleted');
      expect(row.deleted_at).not.toBeNull();
      const again = await call('delete', `/llm-profiles/${p.id}`);
      expect(again.status).toBe(200);
      const logs = (await accountLogRows(t, owner.accountId)).filter(
        (l) => l.action === 'llm_profile.delete' && l.target_id === p.id,
      );
      expect(logs).toHaveLength(1);
    });

    it('409 profile_in_use while a global or session binding references it', async () => {
      const p = await newProfile();
      const session = await createSession(t, { apiKey: owner.apiKey });
      await activateProfile(t, owner.apiKey, p.id, { instance_slot: 'director' });
      await activateProfile(t, owner.apiKey, p.id, { scope: 'session', session_id: session.id });
      const res = await call('delete', `/llm-profiles/${p.id}`);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({
        code: 'profile_in_use',
        details: { global_binding_count: 1, session_binding_count: 1, project_override_count: 0 },
      });
      expect((await profileRow(t, p.id)).status).toBe('active');
      await call('delete', '/llm-profiles/bindings/director');
      await call('delete', `/llm-profiles/bindings/*?scope=session&session_id=${session.id}`);
      expect((await call('delete', `/llm-profiles/${p.id}`)).status).toBe(200);
    });

    it('409 profile_in_use while a Project LLM override references it', async () => {
      const p = await newProfile();
      const session = await createSession(t, { apiKey: owner.apiKey });
      const put = await call('put', `/projects/${session.projectId}/settings/llm-profile-override`, {
        base_profile_id: p.id,
      });
      expect(put.status).toBe(200);
      const res = await call('delete', `/llm-profiles/${p.id}`);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({
        code: 'profile_in_use',
        details: { project_override_count: 1 },
      });
    });

    it('deleting a session removes its bindings (and the profile can then be deleted)', async () => {
      const p = await newProfile();
      const session = await createSession(t, { apiKey: owner.apiKey });
      for (const slot of ['*', 'narrator', 'memory'])
        await activateProfile(t, owner.apiKey, p.id, {
          scope: 'session',
          session_id: session.id,
          instance_slot: slot,
        });
      expect(await sessionBindings(t, session.id)).toHaveLength(3);
      expect((await call('delete', `/sessions/${session.id}`)).status).toBe(200);
      expect(await sessionBindings(t, session.id)).toHaveLength(0);
      expect((await call('delete', `/llm-profiles/${p.id}`)).status).toBe(200);
    });

    it('404 profile_not_found for an unknown id', async () => {
      const res = await call('delete', '/llm-profiles/llmp_unknown');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('profile_not_found');
    });
  });

  describe('isolation', () => {
    it('answers another account’s profile, session and bindings with 404 on every route and changes nothing', async () => {
      const p = await newProfile({ preset_name: 'Private' });
      const session = await createSession(t, { apiKey: owner.apiKey });
      await activateProfile(t, owner.apiKey, p.id, { scope: 'session', session_id: session.id });
      const before = {
        profile: await profileRow(t, p.id),
        bindings: await accountBindings(t, owner.accountId),
      };

      const attempts: Array<
        [string, Promise<{ status: number; body: { error: { code: string } } }>, string]
      > = [
        ['get', call('get', `/llm-profiles/${p.id}`, undefined, other.apiKey), 'profile_not_found'],
        [
          'patch',
          call('patch', `/llm-profiles/${p.id}`, { model_id: 'x' }, other.apiKey),
          'profile_not_found',
        ],
        ['delete', call('delete', `/llm-profiles/${p.id}`, undefined, other.apiKey), 'profile_not_found'],
        ['activate', call('post', `/llm-profiles/${p.id}/activate`, {}, other.apiKey), 'profile_not_found'],
        [
          'unbind',
          call(
            'delete',
            `/llm-profiles/bindings/*?scope=session&session_id=${session.id}`,
            undefined,
            other.apiKey,
          ),
          'session_scope_not_found',
        ],
        [
          'runtime',
          call('get', `/llm-profiles/runtime?session_id=${session.id}`, undefined, other.apiKey),
          'session_scope_not_found',
        ],
        [
          'instances',
          call('get', `/llm-instances/resolved?session_id=${session.id}`, undefined, other.apiKey),
          'session_scope_not_found',
        ],
        [
          'discover',
          call('post', '/llm-profiles/models/discover', { profile_id: p.id }, other.apiKey),
          'profile_not_found',
        ],
        [
          'test',
          call('post', '/llm-profiles/models/test', { profile_id: p.id }, other.apiKey),
          'profile_not_found',
        ],
      ];
      for (const [route, promise, code] of attempts) {
        const res = await promise;
        expect({ route, status: res.status, code: res.body.error?.code }).toEqual({
          route,
          status: 404,
          code,
        });
      }
      const list = await call('get', '/llm-profiles?include_deleted=true', undefined, other.apiKey);
      expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(p.id);
      expect(await profileRow(t, p.id)).toEqual(before.profile);
      expect(await accountBindings(t, owner.accountId)).toEqual(before.bindings);
      expect(await accountBindings(t, other.accountId)).toEqual([]);
    });

    it('needs a key: 401 without one', async () => {
      const res = await t.http.get('/llm-profiles');
      expect(res.status).toBe(401);
    });
  });

  describe('secrets unavailable and the URL guard', () => {
    let plain: TestApp;
    let caller: Caller;
    beforeAll(async () => {
      // No APP_SECRETS_MASTER_KEY, private addresses refused.
      plain = await startTestApp();
      caller = await createAccountCaller(plain, { name: 'Plain' });
    });
    afterAll(async () => {
      await plain.close();
    });
    const send = (method: 'post' | 'patch', path: string, body: object) =>
      plain.http[method](path).set('x-api-key', caller.apiKey).send(body);

    it('503 secret_unavailable when saving a key without a master key; nothing is stored', async () => {
      const res = await send('post', '/llm-profiles', validBody());
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('secret_unavailable');
      expect(await accountProfileRows(plain, caller.accountId)).toHaveLength(0);
    });

    it('503 secret_unavailable on a PATCH that replaces the key; other fields can still change', async () => {
      const row = await createLlmProfile(plain, caller.accountId, { model_id: 'm1' });
      const key = plainKey('patch');
      keys.push(key);
      const res = await send('patch', `/llm-profiles/${row.id}`, { api_key: key, model_id: 'm2' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('secret_unavailable');
      expect((await profileRow(plain, row.id)).model_id).toBe('m1');
      const ok = await send('patch', `/llm-profiles/${row.id}`, { model_id: 'm2' });
      expect(ok.status).toBe(200);
    });

    it.each([
      'http://127.0.0.1:8080/v1',
      'http://localhost/v1',
      'http://localhost./v1',
      'http://10.0.0.5/v1',
      'http://[::1]/v1',
      'http://[::ffff:127.0.0.1]/v1',
      'http://2130706433/v1',
      'http://0x7f.1/v1',
      'http://169.254.169.254/latest',
      'http://user:pass@api.example.com/v1',
      'ftp://api.example.com/v1',
    ])('400 ssrf_blocked for base_url %s on create and PATCH', async (baseUrl) => {
      const res = await send('post', '/llm-profiles', validBody({ base_url: baseUrl }));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('ssrf_blocked');
      const row = await createLlmProfile(plain, caller.accountId, { preset_name: `guard ${Math.random()}` });
      const patch = await send('patch', `/llm-profiles/${row.id}`, { base_url: baseUrl });
      expect(patch.status).toBe(400);
      expect(patch.body.error.code).toBe('ssrf_blocked');
      expect((await profileRow(plain, row.id)).base_url).toBeNull();
    });

    it('accepts private base URLs when ALLOW_PRIVATE_BASE_URL=true', async () => {
      const res = await call('post', '/llm-profiles', validBody({ base_url: 'http://127.0.0.1:11434/v1' }));
      expect(res.status).toBe(201);
    });
  });

  describe('journal and secrecy', () => {
    it('logs llm_profile.create/update/delete/activate/unbind with masked references only', async () => {
      const actions = new Set((await accountLogRows(t, owner.accountId)).map((l) => l.action));
      for (const action of ['create', 'update', 'delete', 'activate', 'unbind'])
        expect(actions).toContain(`llm_profile.${action}`);
      const create = (await accountLogRows(t, owner.accountId)).find(
        (l) => l.action === 'llm_profile.create',
      );
      expect(create?.target_type).toBe('llm_profile');
      expect(JSON.stringify(create?.after_ref)).toMatch(/\.\.\.|\*\*\*/);
    });

    it('never shows a plain key in a response body, a log line or an operation log row', async () => {
      expect(keys.length).toBeGreaterThan(10);
      expect(bodies.length).toBeGreaterThan(50);
      expect(t.logs.length).toBeGreaterThan(0);
      const logRows = JSON.stringify(
        await t.resources.database.db.selectFrom('operation_logs').selectAll().execute(),
      );
      const profileRows = JSON.stringify(
        await t.resources.database.db.selectFrom('llm_profiles').selectAll().execute(),
      );
      const haystacks = { bodies: bodies.join('\n'), logs: t.logs.join('\n'), logRows, profileRows };
      for (const key of keys.filter((k) => k.length >= 16)) {
        for (const [where, text] of Object.entries(haystacks)) {
          expect({ where, found: text.includes(key) }).toEqual({ where, found: false });
        }
      }
    });
  });
});
