import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

describe('HTTP basics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers /health and /health/ready without a key', async () => {
    await t.http.get('/health').expect(200, { status: 'ok' });
    const ready = await t.http.get('/health/ready').expect(200);
    expect(ready.body).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true, kind: 'postgres' }, event_bus: { ok: true, kind: 'redis' } },
    });
  });

  it('serves the OpenAPI document and the browsable reference without a key', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.info.title).toBe('Hearth');
    const page = await t.http.get('/docs').expect(200);
    expect(page.text).toContain('<html');
  });

  it('serves Prometheus metrics with the HTTP latency histogram', async () => {
    const res = await t.http.get('/metrics').expect(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.text).toContain('hearth_http_request_duration_seconds_bucket');
  });

  it('answers an unknown route with 404 not_found in the error shape', async () => {
    const res = await t.http.get('/no/such/route').set('x-api-key', ADMIN_KEY).expect(404);
    expect(res.body.error.code).toBe('not_found');
    expect(typeof res.body.error.message).toBe('string');
  });

  it('answers an unknown route with 404 even without a key (no route, nothing to protect)', async () => {
    expect((await t.http.get('/no/such/route').expect(404)).body.error.code).toBe('not_found');
  });

  it('answers malformed JSON with 400 validation_error', async () => {
    const res = await t.http
      .post('/anything')
      .set('x-api-key', ADMIN_KEY)
      .set('content-type', 'application/json')
      .send('{"broken": ')
      .expect(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('answers a body over the limit with 413', async () => {
    const small = await startTestApp({ env: { HTTP_BODY_LIMIT_BYTES: '2048' }, database: t.database! });
    try {
      const res = await small.http
        .post('/anything')
        .set('x-api-key', ADMIN_KEY)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ text: 'x'.repeat(4096) }))
        .expect(413);
      expect(res.body.error.code).toBe('payload_too_large');
    } finally {
      await small.close();
    }
  });

  it('puts a request id on every response and accepts the caller’s own', async () => {
    const generated = await t.http.get('/health');
    expect(generated.headers['x-request-id']).toMatch(/^req_/);
    const given = await t.http.get('/health').set('x-request-id', 'trace-123');
    expect(given.headers['x-request-id']).toBe('trace-123');
  });
});

describe('database failures', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a NUL character in text with 400 validation_error, not 500', async () => {
    const res = await t.http
      .post('/sessions')
      .set('x-api-key', ADMIN_KEY)
      .send({ title: 'bad \u0000 title' })
      .expect(400);
    expect(res.body.error.code).toBe('validation_error');
  });
});
