import { CompiledQuery } from 'kysely';
import { type DatabaseHandle, openDatabase, StatementPipeline } from '@hearth/persistence';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const sql = <R>(text: string, parameters: unknown[] = []) =>
  CompiledQuery.raw(text, parameters) as CompiledQuery<R>;
const backendPid = (run: DatabaseHandle['pipeline']) =>
  run.executeQuery<{ pid: number }>(sql('SELECT pg_backend_pid() AS pid')).then((r) => r.rows[0].pid);

describe('StatementPipeline (the database handle’s pipeline) on Postgres', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  let pipeline: StatementPipeline;

  beforeAll(async () => {
    database = await createTestDatabase();
    handle = await openDatabase({ url: database.url });
    expect(handle.pipeline).toBeInstanceOf(StatementPipeline);
    pipeline = handle.pipeline as StatementPipeline;
    await handle.db.executeQuery(sql('CREATE TABLE pipe_rows (n int PRIMARY KEY)'));
  });
  afterAll(async () => {
    await handle.close();
    await database.drop();
  });

  it('sends statements at once, runs them one after the other on one connection, answers each in order', async () => {
    const finished: number[] = [];
    const statements = Array.from({ length: 10 }, (_, n) =>
      pipeline
        .executeQuery<{ pid: number; n: number }>(
          sql('SELECT pg_backend_pid() AS pid, $1::int AS n, pg_sleep(0.005)::text AS slept', [n]),
        )
        .then((result) => {
          finished.push(n);
          return result.rows[0];
        }),
    );
    expect(pipeline.pending).toBe(10);
    const rows = await Promise.all(statements);
    expect(rows.map((row) => row.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(finished).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(rows.map((row) => row.pid)).size).toBe(1);
    expect(pipeline.pending).toBe(0);
    // Not one of the pool's connections.
    const pooled = await handle.db.executeQuery<{ application_name: string }>(
      sql('SELECT application_name FROM pg_stat_activity WHERE pid = $1', [rows[0].pid]),
    );
    expect(pooled.rows).toEqual([{ application_name: 'hearth pipeline' }]);
  });

  it('runs each statement as its own transaction: one that fails fails alone', async () => {
    const insert = (n: number) => pipeline.executeQuery(sql('INSERT INTO pipe_rows (n) VALUES ($1)', [n]));
    const results = await Promise.allSettled([
      insert(1),
      insert(1),
      insert(2),
      pipeline.executeQuery(sql('SELECT 1/0')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(results[0]).toMatchObject({ value: { rows: [], numAffectedRows: 1n } });
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    expect(String((results[3] as PromiseRejectedResult).reason)).toMatch(/division by zero/);
    const stored = await handle.db.executeQuery<{ n: number }>(sql('SELECT n FROM pipe_rows ORDER BY n'));
    expect(stored.rows).toEqual([{ n: 1 }, { n: 2 }]);
    await handle.db.executeQuery(sql('DELETE FROM pipe_rows'));
  });

  it('fails the statements of a lost connection, and opens a new one for the next statement', async () => {
    const lostPid = await backendPid(pipeline);
    const running = pipeline.executeQuery(sql('SELECT pg_sleep(5)'));
    const behind = pipeline.executeQuery(sql('SELECT 1 AS one'));
    await handle.db.executeQuery(sql('SELECT pg_terminate_backend($1)', [lostPid]));
    await expect(running).rejects.toThrow();
    await expect(behind).rejects.toThrow();
    const pid = await backendPid(pipeline);
    expect(pid).not.toBe(lostPid);
    expect((await pipeline.executeQuery<{ one: number }>(sql('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
  });

  it('sends statements to the pool while the oldest one in the pipe is held up for more than 50 ms', async () => {
    const pipePid = await backendPid(pipeline);
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = handle.db.transaction().execute(async (tx) => {
      await tx.executeQuery(sql('LOCK TABLE pipe_rows IN ACCESS EXCLUSIVE MODE'));
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await isLocked;
    const held = pipeline.executeQuery<{ count: string }>(
      sql('SELECT count(*)::text AS count FROM pipe_rows'),
    );
    // Within 50 ms, the next statement is still pipelined behind the held one.
    const queuedBehind = backendPid(pipeline);
    await new Promise((resolve) => setTimeout(resolve, 80));
    // Past 50 ms, it goes to the pool and is answered while the held one still waits.
    const overflowPid = await backendPid(pipeline);
    expect(overflowPid).not.toBe(pipePid);
    expect(pipeline.pending).toBe(2);
    release();
    await holder;
    expect((await held).rows).toEqual([{ count: '0' }]);
    expect(await queuedBehind).toBe(pipePid);
    expect(pipeline.pending).toBe(0);
  });
});
