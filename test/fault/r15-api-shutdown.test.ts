import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { openDatabase, type DatabaseHandle } from '@hearth/persistence';
import { ensureBuiltApi, startBuiltApi, type BuiltApi } from '../support/built-api';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { SseClient } from '../support/sse-client';
import { ADMIN_KEY } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { FAKE_KEY, SseCall } from '../e2e/turns-support';

jest.setTimeout(120_000);

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function post<T>(api: BuiltApi, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

/** Whether a new TCP connection to the API is still accepted (an HTTP answer of any status). */
const accepts = (api: BuiltApi) =>
  fetch(`${api.url}/health`).then(
    () => true,
    () => false,
  );

/**
 * R15 (performance-and-reliability.md part D), the API half: SIGTERM to an API process while a turn
 * streams, a Project event stream is open and a request's body is still arriving. The process stops
 * accepting connections at once (a load balancer sends new requests to another replica), serves the
 * request in flight to the end, cancels the generation (the model server
 * sees its connection closed, the client gets the `error` event `generation_cancelled`, the run is
 * recorded `cancelled` and no floor is committed), ends the event stream so its client reconnects
 * elsewhere with `Last-Event-ID`, and exits with code 0.
 */
describe('R15: SIGTERM to an API process with open streams', () => {
  let database: TestDatabase;
  let fake: FakeModelServer;
  let api: BuiltApi | null = null;
  let audit: DatabaseHandle;

  beforeAll(async () => {
    ensureBuiltApi();
    [database, fake] = await Promise.all([createTestDatabase(), startFakeModelServer()]);
    audit = await openDatabase({ url: database.url, poolSize: 2, applicationName: 'r15-audit' });
  });

  afterAll(async () => {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL');
    await audit?.close();
    await fake?.close();
    await database?.drop();
  });

  it('stops accepting, cancels the streaming turn, ends the event stream and exits 0', async () => {
    api = await startBuiltApi({
      env: {
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        REDIS_URL,
        QUEUE_PREFIX: `hearth-r15-${randomBytes(4).toString('hex')}`,
        BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
        LLM_PROVIDER: 'openai',
        LLM_MODEL: 'fake-model',
        LLM_BASE_URL: fake.openaiBaseUrl,
        LLM_API_KEY: FAKE_KEY,
        ALLOW_PRIVATE_BASE_URL: 'true',
      },
    });
    // The session's own Project (there is no POST /projects): its events stream alongside the turn.
    const session = await post<{ id: string }>(api, '/sessions', {});
    const { project_id: projectId } = await audit.db
      .selectFrom('sessions')
      .select(['project_id'])
      .where('id', '=', session.id)
      .executeTakeFirstOrThrow();

    const events = await SseClient.connect(`${api.url}/projects/${projectId}/events/stream`, {
      headers: { 'x-api-key': ADMIN_KEY },
    });
    expect(events.status).toBe(200);

    // A reply far longer than the test: 200 chunks 100 ms apart.
    fake.script({ chunks: Array.from({ length: 200 }, (_, i) => `w${i} `), chunkDelayMs: 100 });
    const turn = await SseCall.open({ baseUrl: api.url }, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'Tell me a long story.',
    });
    expect(turn.status).toBe(200);
    await turn.waitFor((c) => c.types.includes('chunk'), 15_000, 'the first chunk');
    const [{ run_id: runId }] = turn.dataOf<{ run_id: string }>('start');
    expect(runId).toEqual(expect.any(String));

    // A request in flight at SIGTERM: its body is still arriving.
    const slowBody = JSON.stringify({ title: 'sent during shutdown' });
    const slow = http.request(`${api.url}/sessions`, {
      method: 'POST',
      headers: {
        'x-api-key': ADMIN_KEY,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(slowBody)),
        connection: 'close',
      },
    });
    const slowAnswer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      slow.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      slow.on('error', reject);
    });
    slow.write(slowBody.slice(0, 5));
    slow.flushHeaders();
    await new Promise((r) => setTimeout(r, 200));

    api.child.kill('SIGTERM');

    // New connections are refused while the process drains what it holds.
    const deadline = Date.now() + 5_000;
    while ((await accepts(api)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await accepts(api)).toBe(false);

    // The request in flight is still served to the end.
    slow.end(slowBody.slice(5));
    const answered = await slowAnswer;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.body)).toMatchObject({ data: { title: 'sent during shutdown' } });

    const upstream = await fake.waitForClientClose(10_000);
    expect(upstream).toMatchObject({ stream: true, clientClosed: true, completed: false });

    await turn.waitForEnd(15_000);
    expect(turn.types.at(-1)).toBe('error');
    expect(turn.dataOf<{ code: string }>('error')[0]).toMatchObject({ code: 'generation_cancelled' });
    expect(turn.types).not.toContain('done');

    await events.waitForEnd(15_000);
    expect(events.ended).toBe(true);

    expect(await api.exited).toBe(0);

    const run = await audit.db
      .selectFrom('generation_runs')
      .select(['status'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('cancelled');
    const committed = await audit.db
      .selectFrom('floors')
      .select(['id'])
      .where('session_id', '=', session.id)
      .where('state', '=', 'committed')
      .execute();
    expect(committed).toEqual([]);
  });
});
