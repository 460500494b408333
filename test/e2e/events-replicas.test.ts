import { Redis } from 'ioredis';
import { projectEventsChannel } from '@hearth/app';
import { appendEvent, appendEvents } from '../support/factories/events';
import { createProject } from '../support/factories/projects';
import { SseClient, sequencesOf } from '../support/sse-client';
import { REDIS_URL } from '../support/postgres-admin';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * Two API instances on one database and one Redis: a write through one reaches SSE clients of the
 * other. The safety poll of the reading instance is set far out, so only the Redis wake-up can
 * deliver within the test.
 */
describe('event stream across API instances', () => {
  let first: TestApp;
  let second: TestApp;
  const clients: SseClient[] = [];

  const connect = async (app: TestApp, projectId: string, lastEventId?: string) => {
    const client = await SseClient.connect(`${app.baseUrl}/projects/${projectId}/events/stream`, {
      headers: { 'x-api-key': ADMIN_KEY, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    clients.push(client);
    await client.waitFor((c) => c.retry !== null, 5000, 'the stream to open');
    return client;
  };

  beforeAll(async () => {
    first = await startTestApp({ env: { EVENT_STREAM_POLL_MS: '600000' } });
    second = await startTestApp({ database: first.database!, env: { EVENT_STREAM_POLL_MS: '600000' } });
  }, 60_000);
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('delivers a write through one instance to a client of the other', async () => {
    const project = await createProject(first);
    const onSecond = await connect(second, project.id);
    const onFirst = await connect(first, project.id);
    await appendEvent(first, project, { type: 'session.archived' });
    await appendEvent(second, project, { type: 'floor.committed' });
    await onSecond.waitForEvents(2);
    await onFirst.waitForEvents(2);
    expect(onSecond.messages.map((m) => [m.id, m.event])).toEqual([
      ['1', 'session.archived'],
      ['2', 'floor.committed'],
    ]);
    expect(onFirst.messages).toEqual(onSecond.messages);
  });

  it('keeps one order for writers on both instances and many clients per instance', async () => {
    const project = await createProject(first);
    const readers = await Promise.all([first, first, second, second].map((app) => connect(app, project.id)));
    await Promise.all([appendEvents(first, project, 40), appendEvents(second, project, 40)]);
    for (const reader of readers) await reader.waitForEvents(80, 15_000);
    for (const reader of readers) expect(sequencesOf(reader.messages)).toEqual(range(1, 80));
  }, 30_000);

  it('holds one Redis subscription per Project per process, dropped with its last stream', async () => {
    const project = await createProject(first);
    const redis = new Redis(REDIS_URL);
    const subscribers = async () => {
      const [, count] = (await redis.call('PUBSUB', 'NUMSUB', projectEventsChannel(project.id))) as [
        string,
        number,
      ];
      return Number(count);
    };
    try {
      const readers = await Promise.all(
        [first, first, first, second, second].map((app) => connect(app, project.id)),
      );
      expect(await subscribers()).toBe(2);
      for (const reader of readers) reader.close();
      const deadline = Date.now() + 5000;
      while ((await subscribers()) !== 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(await subscribers()).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('resumes on the other instance with Last-Event-ID after a drop', async () => {
    const project = await createProject(first);
    const client = await connect(first, project.id);
    await appendEvents(second, project, 5);
    await client.waitForEvents(5);
    client.drop();
    await appendEvents(first, project, 5);
    const resumed = await connect(second, project.id, client.lastId!);
    await appendEvents(first, project, 2);
    await resumed.waitForEvents(7);
    expect([...sequencesOf(client.messages), ...sequencesOf(resumed.messages)]).toEqual(range(1, 12));
  });
});
