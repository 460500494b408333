import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';
import express from 'express';
import request from 'supertest';
import { DataList, EnvelopeExpressAdapter, Raw, ROUTE_ENVELOPE } from '../../apps/api/src/http/envelope';
import { createOwnedProject } from '../support/factories/accounts';
import { addMember, createAccountCaller, createClientCaller } from '../support/factories/members';
import { pollUntil } from '../support/poll';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/**
 * The per-request pipeline after benchmark P1's overhead work: the envelope applied at the reply
 * (no interceptor), route options read once per handler, the access log, metrics and request ids,
 * and the key lookup against the database on every request (no credential cache).
 */
describe('request pipeline', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'info' }, logSink: (line) => lines.push(line) });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a spec 1 route bare and a spec 3 route in {data, meta}, on every repeat', async () => {
    const owner = await createAccountCaller(t, { name: 'Pipeline owner' });
    const project = await createOwnedProject(t, owner.accountId);
    for (let i = 0; i < 3; i++) {
      const bare = await t.http.get(`/projects/${project.id}`).set('x-api-key', owner.apiKey).expect(200);
      expect(bare.body).toMatchObject({ id: project.id, role: 'owner', status: 'active' });
      expect(bare.body.data).toBeUndefined();
      const list = await t.http.get('/accounts').set('x-api-key', ADMIN_KEY).expect(200);
      expect(Array.isArray(list.body.data)).toBe(true);
      expect(list.body.meta).toBeDefined();
    }
  });

  it('never wraps an error in an envelope', async () => {
    const res = await t.http.get('/accounts/acc_nope').set('x-api-key', ADMIN_KEY);
    expect(res.status).toBe(404);
    expect(res.body.data).toBeUndefined();
    expect(res.body.error.code).toBeDefined();
    const noKey = await t.http.get('/accounts').expect(401);
    expect(noKey.body).toEqual({ error: { code: 'unauthorized', message: 'Missing x-api-key header' } });
  });

  it('serves public routes without a key and Raw values as they are', async () => {
    await t.http.get('/health').expect(200, { status: 'ok' });
    const metrics = await t.http.get('/metrics').expect(200);
    expect(metrics.text).toContain('hearth_http_request_duration_seconds_bucket');
    expect(metrics.text).toContain('route="/projects/:id"');
  });

  it('refuses a key once its Client or account is disabled, also by a change made outside the API', async () => {
    const owner = await createAccountCaller(t, { name: 'Soon disabled' });
    const project = await createOwnedProject(t, owner.accountId);
    const member = await createClientCaller(t, owner.accountId, 'Observer client');
    await addMember(t, project, member, 'observer');
    await t.http.get(`/projects/${project.id}`).set('x-api-key', member.apiKey).expect(200);

    // Direct SQL, as another process would: the cached key is dropped when the change's notification arrives.
    const db = t.resources.database.db;
    const answer = async () => {
      const res = await t.http.get(`/projects/${project.id}`).set('x-api-key', member.apiKey);
      return `${res.status} ${(res.body as { error?: { code: string } }).error?.code ?? ''}`.trim();
    };
    const becomes = (expected: string) => pollUntil(answer, (seen) => seen === expected);
    await db.updateTable('clients').set({ status: 'disabled' }).where('id', '=', member.clientId).execute();
    expect(await becomes('403 client_disabled')).toBe('403 client_disabled');
    await db.updateTable('clients').set({ status: 'active' }).where('id', '=', member.clientId).execute();
    expect(await becomes('200')).toBe('200');
    await db.updateTable('accounts').set({ status: 'disabled' }).where('id', '=', owner.accountId).execute();
    expect(await becomes('403 account_disabled')).toBe('403 account_disabled');
  });

  it('resolves the membership per request: a removed membership answers 404 at once', async () => {
    const owner = await createAccountCaller(t, { name: 'Membership owner' });
    const project = await createOwnedProject(t, owner.accountId);
    const member = await createClientCaller(t, owner.accountId, 'Member client');
    const row = await addMember(t, project, member, 'observer');
    const seen = await t.http.get(`/projects/${project.id}`).set('x-api-key', member.apiKey).expect(200);
    expect(seen.body.role).toBe('observer');
    await t.resources.database.db
      .updateTable('project_members')
      .set({ status: 'removed' })
      .where('id', '=', row.id)
      .execute();
    const gone = await t.http.get(`/projects/${project.id}`).set('x-api-key', member.apiKey).expect(404);
    expect(gone.body.error.code).toBe('project_not_found');
  });

  it('writes one access log line per request with its request id, route and status', async () => {
    const owner = await createAccountCaller(t, { name: 'Logged owner' });
    const project = await createOwnedProject(t, owner.accountId);
    const res = await t.http
      .get(`/projects/${project.id}`)
      .set('x-api-key', owner.apiKey)
      .set('x-request-id', 'trace-p1-overhead')
      .expect(200);
    expect(res.headers['x-request-id']).toBe('trace-p1-overhead');
    const entries = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((e) => e.msg === 'request' && e.request_id === 'trace-p1-overhead');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'info',
      method: 'GET',
      path: `/projects/${project.id}`,
      route: '/projects/:id',
      status: 200,
    });
    expect(typeof entries[0].duration_ms).toBe('number');
  });
});

describe('EnvelopeExpressAdapter.reply', () => {
  /** An Express app whose one route replies through the adapter, as Nest does, under `style`. */
  function appReplying(style: 'data' | 'bare' | undefined, body: () => unknown) {
    const adapter = new EnvelopeExpressAdapter();
    const app = express();
    app.get('/', (req, res) => {
      if (style) (req as unknown as Record<symbol, unknown>)[ROUTE_ENVELOPE] = style;
      adapter.reply(res, body(), 200);
    });
    return request(app);
  }

  it('wraps values in {data}, lists in {data, meta}, and sends Raw values as they are', async () => {
    await appReplying('data', () => ({ a: 1 }))
      .get('/')
      .expect(200, { data: { a: 1 } });
    await appReplying('data', () => new DataList([1, 2], { total: 2 }))
      .get('/')
      .expect(200, { data: [1, 2], meta: { total: 2 } });
    await appReplying('data', () => new Raw({ custom: true }))
      .get('/')
      .expect(200, { custom: true });
    await appReplying('bare', () => ({ a: 1 }))
      .get('/')
      .expect(200, { a: 1 });
    await appReplying('bare', () => new Raw('text'))
      .get('/')
      .expect(200, 'text');
  });

  it('defaults to {data} when no style was recorded', async () => {
    await appReplying(undefined, () => ({ a: 1 }))
      .get('/')
      .expect(200, { data: { a: 1 } });
  });

  it('sends a StreamableFile as a stream, never wrapped', async () => {
    const res = await appReplying('data', () => new StreamableFile(Readable.from([Buffer.from('raw bytes')])))
      .get('/')
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => done(null, text));
      })
      .expect(200);
    expect(res.body).toBe('raw bytes');
  });
});
