import { sql } from 'kysely';
import { ProjectEventWriter } from '@hearth/app';
import { inTransaction, type ProjectRow } from '@hearth/persistence';
import { appendEvent, appendEvents } from '../support/factories/events';
import { createProject } from '../support/factories/projects';
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from '../support/private-services';
import { SseClient, sequencesOf } from '../support/sse-client';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * R5 (performance-and-reliability.md part D): transaction A takes sequence n and holds; B on the
 * same Project waits for A's counter row lock, so nobody can see n+1 before n commits, and a
 * poller or stream that moved past n-1 never skips n.
 */
describe('R5: commit order equals sequence order', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let t: TestApp;
  let project: ProjectRow;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    const database = await postgres.createDatabase();
    t = await startTestApp({ database, env: { REDIS_URL: redis.url } });
    project = await createProject(t);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([postgres?.stop(), redis?.stop()]);
  });

  const page = async (after: number) =>
    (
      await t.http
        .get(`/projects/${project.id}/events`)
        .query({ after, limit: 500 })
        .set('x-api-key', ADMIN_KEY)
        .expect(200)
    ).body as { items: Array<{ sequence: number }>; next_after: number };

  const waitersOnLocks = async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
    `.execute(t.resources.database.db);
    return rows[0].n;
  };

  it('never lets a poller or a stream see n+1 before n while n is held', async () => {
    const writer = t.app.get(ProjectEventWriter);
    const stream = await SseClient.connect(`${t.baseUrl}/projects/${project.id}/events/stream`, {
      headers: { 'x-api-key': ADMIN_KEY },
    });
    const polled: number[] = [];
    let pollAfter = 0;
    const pollOnce = async () => {
      const result = await page(pollAfter);
      polled.push(...result.items.map((e) => e.sequence));
      pollAfter = result.next_after;
      return result;
    };

    for (let round = 0; round < 5; round++) {
      await appendEvents(t, project, 3);
      const base = (await page(0)).next_after;

      // A takes n = base + 1 and holds its transaction open.
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let taken = 0;
      const a = inTransaction(t.resources.database.db, async (uow) => {
        const row = await writer.record(uow, { project, type: 'held', payload: { round } });
        taken = row.sequence;
        await gate;
        return row;
      });
      while (taken === 0) await new Promise((r) => setTimeout(r, 5));
      expect(taken).toBe(base + 1);

      // B starts on the same Project and must wait for A's counter row lock.
      const b = appendEvent(t, project, { type: 'follower', payload: { round } });
      const deadline = Date.now() + 10_000;
      while ((await waitersOnLocks()) < 1) {
        if (Date.now() > deadline) throw new Error('B never waited for the counter lock');
        await new Promise((r) => setTimeout(r, 10));
      }

      // While A holds: nothing beyond n-1, however often we ask.
      for (let i = 0; i < 5; i++) {
        const held = await page(base);
        expect(held.items).toEqual([]);
        expect(held.next_after).toBe(base);
        await pollOnce();
        expect(pollAfter).toBe(base);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(Math.max(0, ...sequencesOf(stream.messages))).toBeLessThanOrEqual(base);

      release();
      const [rowA, rowB] = await Promise.all([a, b]);
      expect([rowA.sequence, rowB.sequence]).toEqual([base + 1, base + 2]);
      await pollOnce();
      expect(polled.slice(-2)).toEqual([base + 1, base + 2]);
    }

    const total = (await page(0)).next_after;
    expect(total).toBe(25);
    await stream.waitFor((c) => c.lastId === String(total), 15_000, 'every event on the stream');
    stream.close();
    const expected = Array.from({ length: total }, (_, i) => i + 1);
    expect(polled).toEqual(expected);
    expect(sequencesOf(stream.messages)).toEqual(expected);
  });
});
