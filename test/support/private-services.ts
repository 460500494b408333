import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { migrateToLatest, openDatabase } from '@hearth/persistence';
import type { TestDatabase } from './test-database';

const run = promisify(execFile);
const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A free loopback TCP port (asked from the kernel, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** A fresh admin connection to this Redis (the caller quits it). */
  admin(): Redis;
  stop(): Promise<void>;
}

/**
 * A Redis of the test's own (performance-and-reliability.md C10): nothing on disk, on a free port,
 * so killing its connections cannot disturb other suites.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--loglevel',
      'warning',
    ],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const admin = () =>
    new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
  await waitUntil(
    async () => {
      const client = admin();
      client.on('error', () => undefined);
      try {
        return (await client.ping()) === 'PONG';
      } finally {
        client.disconnect();
      }
    },
    10_000,
    `redis-server on port ${port}`,
  );
  return {
    url,
    port,
    admin,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

export interface PrivatePostgres {
  port: number;
  adminUrl: string;
  /** A new database on this cluster, migrated to the latest schema, shaped like createTestDatabase's. */
  createDatabase(name?: string): Promise<TestDatabase>;
  stop(): Promise<void>;
}

/**
 * A throw-away Postgres cluster of the test's own: `initdb` into a temp dir (as the `postgres`
 * user, since initdb refuses root), trust auth, started on a free port with its socket in the temp
 * dir, fsync off. `stop()` shuts it down and deletes everything.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-fault-pg-'));
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const asPostgres = (cmd: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  let started = false;
  const cleanup = async () => {
    if (started) {
      await asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
      started = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres(join(PG_BIN, 'initdb'), [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    await asPostgres(join(PG_BIN, 'pg_ctl'), [
      '-D',
      data,
      '-o',
      options,
      '-l',
      join(dir, 'postgres.log'),
      '-w',
      '-t',
      '30',
      'start',
    ]);
    started = true;
  } catch (error) {
    await cleanup();
    throw error;
  }
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const urlOf = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  let counter = 0;
  return {
    port,
    adminUrl,
    async createDatabase(name = `hearth_fault_${++counter}`) {
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      const handle = await openDatabase({
        url: urlOf(name),
        poolSize: 1,
        applicationName: 'hearth-fault-migrate',
      });
      try {
        await migrateToLatest(handle.db);
      } finally {
        await handle.close();
      }
      return {
        name,
        url: urlOf(name),
        drop: () =>
          admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
      };
    },
    stop: cleanup,
  };
}
