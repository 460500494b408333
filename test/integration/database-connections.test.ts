import { readFileSync } from 'node:fs';
import { CompiledQuery } from 'kysely';
import { type DatabaseHandle, openDatabase } from '@hearth/persistence';
import { preparedStatement } from '../../libs/persistence/src/prepared-statements';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** The connections a database handle keeps open: how long they live idle, and their keep-alives. */

const MARKED = preparedStatement('SELECT $1::text AS said /* database-connections test */');
const APPLICATION = 'hearth-connections-test';

/**
 * The TCP timer Linux reports for a loopback connection from `localPort` to Postgres on `serverPort`
 * (/proc/net/tcp, `tr` and `tm->when`): kind 2 is the socket timer that, on an idle established
 * connection, is the keep-alive one; `seconds` is what is left of it.
 */
function tcpTimer(localPort: number, serverPort: number): { kind: number; seconds: number } | null {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 6) continue;
      const local = parseInt(cols[1].split(':').pop() ?? '', 16);
      const remote = parseInt(cols[2].split(':').pop() ?? '', 16);
      if (local !== localPort || remote !== serverPort) continue;
      const [kind, when] = cols[5].split(':');
      // In clock ticks of USER_HZ (100 per second on Linux).
      return { kind: parseInt(kind, 16), seconds: parseInt(when, 16) / 100 };
    }
  }
  return null;
}

describe('database connections on Postgres', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;

  /** One pool connection, so every pool statement below runs on the same one. */
  beforeAll(async () => {
    database = await createTestDatabase();
    handle = await openDatabase({ url: database.url, poolSize: 1, applicationName: APPLICATION });
  });
  afterAll(async () => {
    await handle.close();
    await database.drop();
  });

  const onPool = async <R>(text: string) => (await handle.db.executeQuery<R>(CompiledQuery.raw(text))).rows;

  // The pause between two turns of a chat: pg's pool closed a connection idle for 10 s, so the next
  // turn connected and prepared its statements again (database.ts, POOL_IDLE_MS).
  it('keeps an idle pool connection, with its prepared statements, across a pause of over 10 s', async () => {
    const said = await handle.db.executeQuery<{ said: string }>(CompiledQuery.raw(MARKED, ['before']));
    expect(said.rows).toEqual([{ said: 'before' }]);
    const [before] = await onPool<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await new Promise((resolve) => setTimeout(resolve, 11_500));
    const [after] = await onPool<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(after.pid).toBe(before.pid);
    const prepared = await onPool<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
    expect(prepared.map((p) => p.statement)).toContain(MARKED);
  });

  it('sends TCP keep-alives within a minute on every connection it keeps: pool, pipeline, LISTEN', async () => {
    // handle.close() in afterAll stops the LISTEN too.
    const listening = new Promise<void>((resolve) =>
      handle.listen('connections_test', {
        onNotification: () => undefined,
        onListening: (up) => up && resolve(),
      }),
    );
    await listening;
    const [pool] = await onPool<{ port: number }>('SELECT inet_client_port() AS port');
    const pipelined = await handle.pipeline.executeQuery<{ port: number }>(
      CompiledQuery.raw('SELECT inet_client_port() AS port'),
    );
    const [listen] = await onPool<{ port: number }>(
      `SELECT client_port AS port FROM pg_stat_activity WHERE application_name = '${APPLICATION} listen'`,
    );
    const ports = [pool.port, pipelined.rows[0].port, listen.port];
    expect(new Set(ports).size).toBe(3);
    const serverPort = Number(new URL(database.url).port || 5432);
    for (const port of ports) {
      const timer = tcpTimer(port, serverPort);
      expect(timer).not.toBeNull();
      expect(timer!.kind).toBe(2);
      // The operating system's default would be two hours.
      expect(timer!.seconds).toBeGreaterThan(0);
      expect(timer!.seconds).toBeLessThanOrEqual(60);
    }
  });
});
