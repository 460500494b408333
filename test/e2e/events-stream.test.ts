import { sql } from 'kysely';
import { projectEventsChannel } from '@hearth/app';
import { appendEvent, appendEventBatch, appendEvents, createSessionRow } from '../support/factories/events';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { SseClient, sequencesOf } from '../support/sse-client';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('GET /projects/:id/events/stream', () => {
  let t: TestApp;
  let observer: Caller;
  let stranger: Caller;
  const clients: SseClient[] = [];

  const connect = async (
    projectId: string,
    options: { query?: string; key?: string | null; lastEventId?: string; app?: TestApp } = {},
  ) => {
    const headers: Record<string, string> = {};
    if (options.key !== null) headers['x-api-key'] = options.key ?? ADMIN_KEY;
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const app = options.app ?? t;
    const client = await SseClient.connect(
      `${app.baseUrl}/projects/${projectId}/events/stream${options.query ? `?${options.query}` : ''}`,
      { headers },
    );
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { SSE_HEARTBEAT_MS: '150' } });
    observer = await createAccountCaller(t, { name: 'Observer' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await t.close();
  });

  it('replays the log, then delivers live events, in order, as the query items', async () => {
    const project = await createProject(t);
    await appendEvents(t, project, 5, (i) => ({ type: i % 2 ? 'floor.committed' : 'session.archived' }));
    const client = await connect(project.id);
    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(client.headers['cache-control']).toBe('no-cache');
    expect(client.headers['x-accel-buffering']).toBe('no');
    expect(client.headers['content-encoding']).toBeUndefined();
    await client.waitForEvents(5);
    expect(client.retry).toBeGreaterThan(0);

    await appendEvents(t, project, 5, () => ({ type: 'derived_output.created' }));
    await client.waitForEvents(10);
    expect(sequencesOf(client.messages)).toEqual(range(1, 10));

    const query = await t.http.get(`/projects/${project.id}/events`).set('x-api-key', ADMIN_KEY).expect(200);
    for (const [i, message] of client.messages.entries()) {
      const item = query.body.items[i];
      expect(message.id).toBe(String(item.sequence));
      expect(message.event).toBe(item.type);
      expect(JSON.parse(message.data)).toEqual(item);
    }
  });

  it('delivers events committed together in one transaction, and many in a burst, exactly once', async () => {
    const project = await createProject(t);
    const client = await connect(project.id);
    await client.waitFor((c) => c.retry !== null, 5000, 'the retry line');
    await Promise.all(range(1, 30).map(() => appendEvent(t, project)));
    await client.waitForEvents(30);
    expect(sequencesOf(client.messages)).toEqual(range(1, 30));
  });

  it('delivers large bursts, in order, to a client that pauses reading', async () => {
    const project = await createProject(t);
    const client = await connect(project.id);
    await client.waitFor((c) => c.retry !== null, 5000, 'the stream to open');
    client.pause();
    // About 6 MB of events: far more than the socket buffers hold while nobody reads.
    const blob = 'x'.repeat(20_000);
    for (let i = 0; i < 3; i++) {
      await appendEventBatch(
        t,
        project,
        Array.from({ length: 100 }, (_, j) => ({ payload: { i, j, blob } })),
      );
      await new Promise((r) => setTimeout(r, 300));
    }
    client.resume();
    await client.waitForEvents(300, 20_000);
    expect(sequencesOf(client.messages)).toEqual(range(1, 300));
  }, 30_000);

  it('resumes after Last-Event-ID, taking the larger of it and `after`', async () => {
    const project = await createProject(t);
    await appendEvents(t, project, 10);
    const resumed = await connect(project.id, { lastEventId: '7' });
    await resumed.waitForEvents(3);
    const larger = await connect(project.id, { query: 'after=3', lastEventId: '8' });
    await larger.waitForEvents(2);
    const afterWins = await connect(project.id, { query: 'after=9', lastEventId: '2' });
    await afterWins.waitForEvents(1);
    await appendEvent(t, project);
    for (const client of [resumed, larger, afterWins]) await client.waitFor((c) => c.lastId === '11');
    expect(sequencesOf(resumed.messages)).toEqual(range(8, 11));
    expect(sequencesOf(larger.messages)).toEqual(range(9, 11));
    expect(sequencesOf(afterWins.messages)).toEqual([10, 11]);

    // A client drops and reconnects with its last id: nothing missing, nothing twice.
    resumed.drop();
    await appendEvents(t, project, 3);
    const again = await connect(project.id, { lastEventId: resumed.lastId! });
    await again.waitForEvents(3);
    expect([...sequencesOf(resumed.messages), ...sequencesOf(again.messages)]).toEqual(range(8, 14));
  });

  it('rejects a malformed Last-Event-ID with 400 validation_error', async () => {
    const project = await createProject(t);
    const client = await connect(project.id, { lastEventId: 'abc' });
    await client.waitForEnd();
    expect(client.status).toBe(400);
    expect(JSON.parse(client.body).error.code).toBe('validation_error');
  });

  it('sends a `: heartbeat` comment every SSE_HEARTBEAT_MS', async () => {
    const project = await createProject(t);
    const client = await connect(project.id);
    await client.waitFor(
      (c) => c.comments.filter((x) => x === 'heartbeat').length >= 3,
      5000,
      'three heartbeats',
    );
    expect(client.messages).toEqual([]);
  });

  it('applies types and session_id to replay and live events', async () => {
    const project = await createProject(t);
    const session = await createSessionRow(t, project);
    await appendEvents(t, project, 4, (i) => ({
      type: i % 2 ? 'a.kind' : 'b.kind',
      session_id: i < 2 ? session.id : null,
    }));
    const byType = await connect(project.id, { query: 'types=a.kind' });
    const bySession = await connect(project.id, { query: `session_id=${session.id}` });
    await appendEvents(t, project, 4, (i) => ({
      type: i % 2 ? 'a.kind' : 'b.kind',
      session_id: i >= 2 ? session.id : null,
    }));
    await appendEvent(t, project, { type: 'marker', session_id: session.id });
    await byType.waitFor((c) => c.messages.length >= 4);
    await bySession.waitFor((c) => c.lastId === '9');
    expect(sequencesOf(byType.messages)).toEqual([2, 4, 6, 8]);
    expect(byType.messages.every((m) => m.event === 'a.kind')).toBe(true);
    expect(sequencesOf(bySession.messages)).toEqual([1, 2, 7, 8, 9]);
  });

  it('never shows an observer owner or internal events, in replay or live', async () => {
    const project = await createProject(t);
    await addMember(t, project, observer, 'observer');
    const levels = ['project', 'owner', 'internal'] as const;
    await appendEvents(t, project, 6, (i) => ({ visibility: levels[i % 3] }));
    const asObserver = await connect(project.id, { key: observer.apiKey });
    const asOwner = await connect(project.id);
    await appendEvents(t, project, 6, (i) => ({ visibility: levels[i % 3] }));
    await appendEvent(t, project, { type: 'marker' });
    await asObserver.waitFor((c) => c.lastId === '13');
    await asOwner.waitFor((c) => c.lastId === '13');
    expect(sequencesOf(asObserver.messages)).toEqual([1, 4, 7, 10, 13]);
    expect(asObserver.messages.every((m) => JSON.parse(m.data).visibility === 'project')).toBe(true);
    expect(sequencesOf(asOwner.messages)).toEqual([1, 2, 4, 5, 7, 8, 10, 11, 13]);
  });

  it('refuses before streaming: 404 project_not_found, 404 session_not_found, 400, 401', async () => {
    const project = await createProject(t);
    const other = await createSessionRow(t, await createProject(t));
    const cases: Array<[SseClient, number, string]> = [
      [await connect(project.id, { key: stranger.apiKey }), 404, 'project_not_found'],
      [await connect('prj_missing'), 404, 'project_not_found'],
      [await connect(project.id, { query: `session_id=${other.id}` }), 404, 'session_not_found'],
      [await connect(project.id, { query: 'limit=5' }), 400, 'validation_error'],
      [await connect(project.id, { query: 'after=-2' }), 400, 'validation_error'],
      [await connect(project.id, { key: null }), 401, 'unauthorized'],
    ];
    for (const [client, status, code] of cases) {
      await client.waitForEnd();
      expect(client.status).toBe(status);
      expect(client.headers['content-type']).toMatch(/application\/json/);
      expect(JSON.parse(client.body).error.code).toBe(code);
    }
  });

  it('keeps the hearth_sse_connections gauge up to date', async () => {
    const project = await createProject(t);
    const gauge = async () => {
      const text = (await t.http.get('/metrics').expect(200)).text;
      const match = text.match(/^hearth_sse_connections\{stream="project_events"\} (\d+)$/m);
      return match ? Number(match[1]) : 0;
    };
    const settle = async (value: number) => {
      const deadline = Date.now() + 5000;
      while ((await gauge()) !== value && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return gauge();
    };
    // Streams of earlier tests were dropped by their clients; the server notices shortly.
    expect(await settle(0)).toBe(0);
    const a = await connect(project.id);
    const b = await connect(project.id);
    await a.waitFor((c) => c.retry !== null);
    await b.waitFor((c) => c.retry !== null);
    expect(await gauge()).toBe(2);
    a.drop();
    expect(await settle(1)).toBe(1);
    b.drop();
    expect(await settle(0)).toBe(0);
  });

  it('answers 503 feature_unavailable when EVENT_STREAM_ENABLED is false (the query still works)', async () => {
    const off = await startTestApp({ env: { EVENT_STREAM_ENABLED: 'false' }, database: t.database! });
    try {
      const project = await createProject(off);
      const client = await connect(project.id, { app: off });
      await client.waitForEnd();
      expect(client.status).toBe(503);
      expect(JSON.parse(client.body).error.code).toBe('feature_unavailable');
      await off.http.get(`/projects/${project.id}/events`).set('x-api-key', ADMIN_KEY).expect(200);
    } finally {
      await off.close();
    }
  });

  it('sends `event: error` and ends the stream when reading the log fails', async () => {
    const broken = await startTestApp();
    try {
      const project = await createProject(broken);
      await appendEvents(broken, project, 2);
      const client = await connect(project.id, { app: broken });
      await client.waitForEvents(2);
      // Make the database refuse the next read, then wake the stream.
      await sql`ALTER TABLE project_events RENAME TO project_events_gone`.execute(
        broken.resources.database.db,
      );
      await broken.resources.eventBus.publish(projectEventsChannel(project.id), '3');
      await client.waitForEnd();
      const last = client.messages[client.messages.length - 1];
      expect(last.event).toBe('error');
      expect(last.id).toBeNull();
      expect(JSON.parse(last.data)).toEqual({ code: 'internal_error', message: expect.any(String) });
      expect(sequencesOf(client.messages)).toEqual([1, 2]);
    } finally {
      await broken.close();
    }
  });

  it('ends open streams when the app shuts down, so clients reconnect elsewhere', async () => {
    const second = await startTestApp({ database: t.database! });
    const project = await createProject(second);
    const client = await connect(project.id, { app: second });
    await client.waitFor((c) => c.retry !== null);
    await second.close();
    await client.waitForEnd(5000);
    expect(client.messages.some((m) => m.event === 'error')).toBe(false);
  });

  it('works in embedded mode on the in-process bus', async () => {
    const embedded = await startTestApp({ embedded: true });
    try {
      const project = await createProject(embedded);
      await appendEvents(embedded, project, 2);
      const client = await connect(project.id, { app: embedded });
      await client.waitForEvents(2);
      await appendEvents(embedded, project, 2);
      await client.waitForEvents(4);
      expect(sequencesOf(client.messages)).toEqual([1, 2, 3, 4]);
      // The event JSON built by the embedded Postgres equals the query items too.
      const query = await embedded.http
        .get(`/projects/${project.id}/events`)
        .set('x-api-key', ADMIN_KEY)
        .expect(200);
      expect(client.messages.map((m) => JSON.parse(m.data))).toEqual(query.body.items);
    } finally {
      await embedded.close();
    }
  }, 60_000);
});
