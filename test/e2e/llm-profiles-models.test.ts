import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { createProfile, newMasterKey, plainKey, type ProfileJson } from '../support/factories/llm-profiles';
import { createAccountCaller, type Caller } from '../support/factories/members';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A models endpoint whose answer a test chooses (status and raw body), recording the headers it got:
 * the fake model server always lists its models, so discovery failures need this one.
 */
async function startModelsEndpoint() {
  const seen: IncomingHttpHeaders[] = [];
  let answer: { status: number; body: string } = {
    status: 200,
    body: JSON.stringify({
      object: 'list',
      data: [{ id: 'm-1', object: 'model', created: 1, owned_by: 'x' }],
    }),
  };
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    answer(status: number, body: unknown) {
      answer = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `POST /llm-profiles/models/discover` and `/models/test` (spec 2): through the guarded client against
 * the fake model server; missing credentials; upstream failures as 502 with the status and never the
 * key; the URL guard and `allow_private_network`.
 */
describe('LLM profile model discovery and test', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let endpoint: Awaited<ReturnType<typeof startModelsEndpoint>>;
  let caller: Caller;
  const bodies: string[] = [];
  const keys: string[] = [];

  beforeAll(async () => {
    fake = await startFakeModelServer();
    endpoint = await startModelsEndpoint();
    t = await startTestApp({
      env: { APP_SECRETS_MASTER_KEY: newMasterKey(), ALLOW_PRIVATE_BASE_URL: 'true', LOG_LEVEL: 'debug' },
    });
    caller = await createAccountCaller(t, { name: 'Prober' });
  });
  afterAll(async () => {
    await t.close();
    await endpoint.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const post = async (route: 'discover' | 'test', body: object, app = t, apiKey = caller.apiKey) => {
    const res = await app.http.post(`/llm-profiles/models/${route}`).set('x-api-key', apiKey).send(body);
    bodies.push(res.text);
    return res;
  };
  const key = (label: string) => {
    const k = plainKey(label);
    keys.push(k);
    return k;
  };

  describe('discover', () => {
    it.each([
      [
        'openai',
        () => fake.openaiBaseUrl,
        [
          { id: 'fake-model', label: 'fake-model' },
          { id: 'fake-model-large', label: 'fake-model-large' },
        ],
      ],
      [
        'anthropic',
        () => fake.anthropicBaseUrl,
        [
          { id: 'fake-model', label: 'fake-model' },
          { id: 'fake-model-large', label: 'fake-model-large' },
        ],
      ],
      [
        'google',
        () => fake.geminiBaseUrl,
        [
          { id: 'fake-model', label: 'fake-model' },
          { id: 'fake-model-large', label: 'fake-model-large' },
        ],
      ],
    ])('lists the %s models as {id, label}', async (provider, baseUrl, expected) => {
      const res = await post('discover', { provider, api_key: key('disc'), base_url: baseUrl() });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: expected });
    });

    it('reuses a profile’s stored key and base URL', async () => {
      const stored = key('stored');
      const profile = await createProfile(t, caller.apiKey, { base_url: endpoint.url, api_key: stored });
      const res = await post('discover', { profile_id: profile.id });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: 'm-1', label: 'm-1' }]);
      expect(endpoint.seen.at(-1)?.authorization).toBe(`Bearer ${stored}`);
      // A body key and base URL take precedence over the stored ones.
      const other = key('other');
      await post('discover', { profile_id: profile.id, api_key: other, base_url: endpoint.url });
      expect(endpoint.seen.at(-1)?.authorization).toBe(`Bearer ${other}`);
    });

    it.each([
      ['nothing', {}, ['provider', 'api_key']],
      ['no api_key', { provider: 'openai' }, ['api_key']],
      ['no provider', { api_key: 'sk-abcdefghijklmnop' }, ['provider']],
    ])('400 invalid_request without profile_id and %s', async (_label, body, fields) => {
      const res = await post('discover', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { fields } });
    });

    it('400 invalid_request for openai-compatible without a base_url', async () => {
      const res = await post('discover', { provider: 'openai-compatible', api_key: key('compat') });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    });

    it('404 profile_not_found for a missing or deleted profile', async () => {
      const profile = await createProfile(t, caller.apiKey, {});
      await t.http.delete(`/llm-profiles/${profile.id}`).set('x-api-key', caller.apiKey).expect(200);
      for (const id of ['llmp_missing', profile.id]) {
        const res = await post('discover', { profile_id: id });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('profile_not_found');
      }
    });

    it.each([401, 403, 404, 429, 500, 503])(
      '502 model_discovery_failed when the upstream answers %i, with the status and never the key',
      async (status) => {
        const k = key('fail');
        endpoint.answer(status, { error: { message: `invalid key ${k}`, type: 'x' } });
        const res = await post('discover', { provider: 'openai', api_key: k, base_url: endpoint.url });
        expect(res.status).toBe(502);
        expect(res.body.error.code).toBe('model_discovery_failed');
        expect(res.body.error.message).toContain(String(status));
        expect(res.body.error.details).toEqual({ upstream_status: status });
        expect(res.text).not.toContain(k);
      },
    );

    it.each([
      ['not JSON', 'this is not json'],
      ['JSON of the wrong shape', '{"object":"list","data":[{"name":"no id"}]}'],
    ])('502 model_discovery_invalid_response for %s', async (_label, body) => {
      endpoint.answer(200, body);
      const res = await post('discover', { provider: 'openai', api_key: key('raw'), base_url: endpoint.url });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('model_discovery_invalid_response');
    });

    it('502 model_discovery_failed when nothing listens', async () => {
      const closed = await startModelsEndpoint();
      await closed.close();
      const res = await post('discover', {
        provider: 'openai',
        api_key: key('closed'),
        base_url: closed.url,
      });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('model_discovery_failed');
    });

    afterAll(() =>
      endpoint.answer(200, {
        object: 'list',
        data: [{ id: 'm-1', object: 'model', created: 1, owned_by: 'x' }],
      }),
    );
  });

  describe('test', () => {
    let profile: ProfileJson;
    const stored = plainKey('test-stored');
    beforeAll(async () => {
      keys.push(stored);
      profile = await createProfile(t, caller.apiKey, {
        provider: 'openai',
        model_id: 'stored-model',
        base_url: fake.openaiBaseUrl,
        api_key: stored,
      });
    });

    it('sends one message with the stored model and key, answering {request_text, response_text}', async () => {
      const res = await post('test', { profile_id: profile.id });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data).sort()).toEqual(['request_text', 'response_text']);
      expect(res.body.data.response_text).toBe(`ECHO: ${res.body.data.request_text}`);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]).toMatchObject({ model: 'stored-model', stream: false });
      expect(fake.requests[0].headers.authorization).toBe(`Bearer ${stored}`);
    });

    it('takes model_id and reasoning_effort from the body', async () => {
      const res = await post('test', {
        profile_id: profile.id,
        model_id: 'other-model',
        reasoning_effort: 'high',
      });
      expect(res.status).toBe(200);
      expect(fake.requests[0].model).toBe('other-model');
      expect(JSON.stringify(fake.requests[0].body)).toContain('high');
    });

    it.each(['anthropic', 'google'] as const)('works without a profile for %s', async (provider) => {
      const res = await post('test', {
        provider,
        model_id: 'fake-model',
        api_key: key('adhoc'),
        base_url: provider === 'anthropic' ? fake.anthropicBaseUrl : fake.geminiBaseUrl,
      });
      expect(res.status).toBe(200);
      expect(fake.requests[0].protocol).toBe(provider === 'anthropic' ? 'anthropic' : 'gemini');
    });

    it('400 invalid_request without profile_id and model_id', async () => {
      const res = await post('test', {
        provider: 'openai',
        api_key: key('nomodel'),
        base_url: fake.openaiBaseUrl,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { fields: ['model_id'] } });
      expect(fake.requests).toHaveLength(0);
    });

    it.each([
      ['reasoning_effort of 65 characters', { reasoning_effort: 'x'.repeat(65) }],
      ['an unknown field', { temperature: 1 }],
      ['allow_private_network not a boolean', { allow_private_network: 'yes' }],
    ])('400 validation_error for %s', async (_label, body) => {
      const res = await post('test', { profile_id: profile.id, ...body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('accepts reasoning_effort of 64 characters', async () => {
      const res = await post('test', { profile_id: profile.id, reasoning_effort: 'x'.repeat(64) });
      expect(res.status).toBe(200);
    });

    it('502 model_test_failed with the upstream status, never the key', async () => {
      fake.script({ status: 401, errorBody: { error: { message: `bad key ${stored}` } } });
      const res = await post('test', { profile_id: profile.id });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('model_test_failed');
      expect(res.body.error.message).toContain('401');
      expect(res.text).not.toContain(stored);
    });

    it('502 model_test_invalid_response for an unreadable answer', async () => {
      fake.script({ rawBody: '<html>not json</html>' });
      const res = await post('test', { profile_id: profile.id });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('model_test_invalid_response');
    });
  });

  describe('the URL guard', () => {
    let strict: TestApp;
    let strictCaller: Caller;
    beforeAll(async () => {
      strict = await startTestApp({ env: { APP_SECRETS_MASTER_KEY: newMasterKey() } });
      strictCaller = await createAccountCaller(strict, { name: 'Strict' });
    });
    afterAll(async () => {
      await strict.close();
    });

    it.each([false, true])(
      'refuses a private base_url with 400 ssrf_blocked when the server does not allow it (allow_private_network %s)',
      async (allow) => {
        for (const route of ['discover', 'test'] as const) {
          const res = await post(
            route,
            {
              provider: 'openai',
              ...(route === 'test' ? { model_id: 'm' } : {}),
              api_key: key('strict'),
              base_url: fake.openaiBaseUrl,
              allow_private_network: allow,
            },
            strict,
            strictCaller.apiKey,
          );
          expect(res.status).toBe(400);
          expect(res.body.error.code).toBe('ssrf_blocked');
        }
        expect(fake.requests).toHaveLength(0);
      },
    );

    it('lets allow_private_network through when the server allows private addresses', async () => {
      const res = await post('discover', {
        provider: 'openai',
        api_key: key('allowed'),
        base_url: fake.openaiBaseUrl,
        allow_private_network: true,
      });
      expect(res.status).toBe(200);
    });
  });

  it('never shows a plain key in a response body or a log line', async () => {
    expect(keys.length).toBeGreaterThan(10);
    const haystacks = { bodies: bodies.join('\n'), logs: t.logs.join('\n') };
    for (const k of keys)
      for (const [where, text] of Object.entries(haystacks))
        expect({ where, found: text.includes(k) }).toEqual({ where, found: false });
  });
});
