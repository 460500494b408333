import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import type { ProjectRow } from '@hearth/persistence';
import { createProject } from '../support/factories/projects';
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from '../support/private-services';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(90_000);

const run = promisify(execFile);
const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

const WRITERS = 8;
const RUN_MS = 8_000;
const STOP_AT_MS = 2_000;
const START_AT_MS = 4_000;
/** No request may take longer than this (the pool's connect timeout is 5 s). */
const REQUEST_TIMEOUT_MS = 12_000;
const RECOVERY_MS = 5_000;

interface Outcome {
  writer: number;
  startedAt: number;
  endedAt: number;
  status: number | 'timeout' | 'network_error';
  code: string | null;
  id: string | null;
}

/**
 * R3 (performance-and-reliability.md part D): the private cluster is stopped (`pg_ctl stop -m fast`)
 * while 8 writers create derived outputs, then started again. Each request answers 201 or 503
 * `resource_busy` within a bound; the same process serves a 201 within 5 s of the cluster being back;
 * and the three tables of a derived output write (row, operation log, Project event) hold every write
 * whole or not at all, with gap-free sequences.
 */
describe('R3: Postgres restart under concurrent derived output writers', () => {
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let t: TestApp;
  let project: ProjectRow;
  let dataDir: string;
  let socketDir: string;

  const asPostgres = (cmd: string, args: string[]) =>
    typeof process.getuid === 'function' && process.getuid() === 0
      ? run('runuser', ['-u', 'postgres', '--', cmd, ...args])
      : run(cmd, args);

  /** A fresh connection for the audit, so the app's pool state cannot colour it. */
  const audit = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: t.database!.url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    const database = await postgres.createDatabase();
    t = await startTestApp({ database, env: { REDIS_URL: redis.url } });
    project = await createProject(t);
    const { rows } = await sql<{ data: string; sockets: string }>`
      SELECT current_setting('data_directory') AS data,
             current_setting('unix_socket_directories') AS sockets
    `.execute(t.resources.database.db);
    dataDir = rows[0].data;
    socketDir = rows[0].sockets;
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([postgres?.stop(), redis?.stop()]);
  });

  const stopCluster = () =>
    asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  const startCluster = () =>
    asPostgres(join(PG_BIN, 'pg_ctl'), [
      '-D',
      dataDir,
      '-o',
      `-p ${postgres.port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
      '-l',
      join(socketDir, 'postgres.log'),
      '-w',
      '-t',
      '30',
      'start',
    ]);

  const createOnce = async (writer: number, n: number): Promise<Outcome> => {
    const startedAt = Date.now();
    try {
      const res = await t.http
        .post(`/projects/${project.id}/derived-outputs`)
        .set('x-api-key', ADMIN_KEY)
        .timeout({ response: REQUEST_TIMEOUT_MS, deadline: REQUEST_TIMEOUT_MS })
        .send({ domain: 'r3', value: { writer, n } });
      return {
        writer,
        startedAt,
        endedAt: Date.now(),
        status: res.status,
        code: (res.body?.error?.code as string | undefined) ?? null,
        id: res.status === 201 ? (res.body?.item?.id as string) : null,
      };
    } catch (error) {
      const timedOut = (error as { timeout?: unknown }).timeout !== undefined;
      return {
        writer,
        startedAt,
        endedAt: Date.now(),
        status: timedOut ? 'timeout' : 'network_error',
        code: String(error),
        id: null,
      };
    }
  };

  it('answers 201 or 503 resource_busy, recovers within 5 s and leaves no half-written write', async () => {
    const t0 = Date.now();
    const outcomes: Outcome[] = [];
    const writer = async (w: number) => {
      for (let n = 0; Date.now() - t0 < RUN_MS; n++) {
        const outcome = await createOnce(w, n);
        outcomes.push(outcome);
        // A refused request returns at once; do not spin the two cores while the cluster is down.
        if (outcome.status !== 201) await new Promise((r) => setTimeout(r, 50));
      }
    };
    const fault = async () => {
      await new Promise((r) => setTimeout(r, STOP_AT_MS));
      const stopRequestedAt = Date.now();
      await stopCluster();
      const stoppedAt = Date.now();
      await new Promise((r) => setTimeout(r, Math.max(0, t0 + START_AT_MS - Date.now())));
      await startCluster();
      return { stopRequestedAt, stoppedAt, backAt: Date.now() };
    };
    const [{ stopRequestedAt, stoppedAt, backAt }] = await Promise.all([
      fault(),
      ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
    ]);

    // Every answer is 201 or 503 resource_busy: never a 500, a dropped socket or a hang.
    const unexpected = outcomes.filter(
      (o) => !(o.status === 201 || (o.status === 503 && o.code === 'resource_busy')),
    );
    expect(unexpected).toEqual([]);
    const maxLatency = Math.max(...outcomes.map((o) => o.endedAt - o.startedAt));
    expect(maxLatency).toBeLessThan(REQUEST_TIMEOUT_MS);

    // The fault was real: successes before the stop, refusals while down, successes after.
    const created = outcomes.filter((o) => o.status === 201);
    expect(created.filter((o) => o.endedAt < stopRequestedAt).length).toBeGreaterThan(0);
    const busy = outcomes.filter((o) => o.status === 503);
    expect(busy.filter((o) => o.startedAt >= stoppedAt && o.endedAt <= backAt).length).toBeGreaterThan(0);
    // The same process (no app restart) succeeds within 5 s of the cluster being back.
    // (`pg_ctl start -w` polls, so the first success may even land a few ms before it returns.)
    const firstAfter = Math.min(...created.filter((o) => o.startedAt >= stoppedAt).map((o) => o.endedAt));
    expect(Number.isFinite(firstAfter)).toBe(true);
    expect(firstAfter - backAt).toBeLessThan(RECOVERY_MS);
    expect(created.filter((o) => o.startedAt >= backAt).length).toBeGreaterThan(WRITERS);

    // Audit through a fresh connection.
    const { rows, logs, events, counter } = await audit(async (c) => ({
      rows: (
        await c.query<{ id: string }>('SELECT id FROM derived_outputs WHERE project_id = $1', [project.id])
      ).rows,
      logs: (
        await c.query<{ id: string; target_id: string | null; action: string }>(
          'SELECT id, target_id, action FROM operation_logs WHERE project_id = $1',
          [project.id],
        )
      ).rows,
      events: (
        await c.query<{
          sequence: string;
          type: string;
          operation_log_id: string | null;
          derived_output_id: string | null;
        }>(
          `SELECT sequence, type, operation_log_id, payload->>'derived_output_id' AS derived_output_id
           FROM project_events WHERE project_id = $1 ORDER BY sequence`,
          [project.id],
        )
      ).rows,
      counter: (
        await c.query<{ last_sequence: string }>(
          'SELECT last_sequence FROM project_event_counters WHERE project_id = $1',
          [project.id],
        )
      ).rows,
    }));

    const rowIds = new Set(rows.map((r) => r.id));
    expect(rowIds.size).toBe(rows.length);
    // Every 201 is in the database (never 201-then-missing).
    const createdIds = created.map((o) => o.id);
    expect(createdIds.every((id) => typeof id === 'string')).toBe(true);
    expect(createdIds.filter((id) => !rowIds.has(id!))).toEqual([]);
    // A write answered 503 may have committed (the acknowledgement was lost), never the other way.
    expect(rows.length).toBeGreaterThanOrEqual(created.length);

    // Exactly one operation log and one `derived_output.created` event per row, and nothing else.
    expect(logs.every((l) => l.action === 'derived_output.create')).toBe(true);
    expect(events.every((e) => e.type === 'derived_output.created')).toBe(true);
    const count = (ids: Array<string | null>) => {
      const m = new Map<string | null, number>();
      for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1);
      return m;
    };
    const logsPerRow = count(logs.map((l) => l.target_id));
    const eventsPerRow = count(events.map((e) => e.derived_output_id));
    for (const id of rowIds) {
      expect([id, logsPerRow.get(id) ?? 0, eventsPerRow.get(id) ?? 0]).toEqual([id, 1, 1]);
    }
    expect(logs.length).toBe(rows.length);
    expect(events.length).toBe(rows.length);
    // Every event has its row and its own operation log.
    const logOf = new Map(logs.map((l) => [l.id, l.target_id]));
    for (const e of events) {
      expect(rowIds.has(e.derived_output_id!)).toBe(true);
      expect(logOf.get(e.operation_log_id!)).toBe(e.derived_output_id);
    }
    // Sequences are exactly 1..N, and the counter agrees.
    expect(events.map((e) => Number(e.sequence))).toEqual(
      Array.from({ length: events.length }, (_, i) => i + 1),
    );
    expect(counter.map((c) => Number(c.last_sequence))).toEqual([events.length]);
  });
});
