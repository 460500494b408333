import type { ProjectRow } from '@hearth/persistence';
import { appendEvent } from '../support/factories/events';
import { createProject } from '../support/factories/projects';
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from '../support/private-services';
import { SseClient, sequencesOf } from '../support/sse-client';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(90_000);

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with the same drops. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOTAL_EVENTS = 3000;
const WRITERS = 8;

/**
 * R4 (performance-and-reliability.md part D): 8 writers on two API processes append to one Project
 * while an SSE reader is dropped at random (about every 200 events, sometimes mid-block) and
 * reconnects with Last-Event-ID, alternating instances. It must end with every sequence exactly
 * once, in order.
 */
describe('R4: SSE clients dropped at random while two API processes take writes', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let apps: TestApp[];
  let project: ProjectRow;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    const database = await postgres.createDatabase();
    const env = { REDIS_URL: redis.url };
    const first = await startTestApp({ database, env });
    const second = await startTestApp({ database, env });
    apps = [first, second];
    project = await createProject(first);
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await Promise.all([postgres?.stop(), redis?.stop()]);
  });

  it('ends with every sequence exactly once, in order', async () => {
    const seed = Number(process.env.R4_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    let remaining = TOTAL_EVENTS;
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const app = apps[w % 2];
      while (remaining > 0) {
        remaining--;
        await appendEvent(app, project, { type: `writer.${w}`, payload: { writer: w } });
      }
    });
    let writersDone = false;
    const writing = Promise.all(writers).then(() => (writersDone = true));

    const received: number[] = [];
    let lastId: string | null = null;
    let connections = 0;
    while (!(writersDone && lastId === String(TOTAL_EVENTS))) {
      const app = apps[connections % 2];
      connections++;
      const dropAfter = 50 + Math.floor(random() * 300);
      const client = await SseClient.connect(`${app.baseUrl}/projects/${project.id}/events/stream`, {
        headers: { 'x-api-key': ADMIN_KEY, ...(lastId !== null ? { 'last-event-id': lastId } : {}) },
      });
      expect(client.status).toBe(200);
      await client.waitFor(
        (c) =>
          c.messages.length >= dropAfter || c.ended || (writersDone && c.lastId === String(TOTAL_EVENTS)),
        30_000,
        `progress on connection ${connections} (seed ${seed})`,
      );
      client.drop();
      expect(client.messages.some((m) => m.event === 'error')).toBe(false);
      received.push(...sequencesOf(client.messages));
      lastId = client.lastId ?? lastId;
    }
    await writing;

    expect(connections).toBeGreaterThan(5);
    expect(received.length).toBe(TOTAL_EVENTS);
    expect(received).toEqual(Array.from({ length: TOTAL_EVENTS }, (_, i) => i + 1));
  });
});
