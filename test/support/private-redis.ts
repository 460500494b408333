import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from './private-services';

const run = promisify(execFile);

/**
 * A restartable Redis of the test's own, configured like this machine's (nothing on disk):
 * `wipe()` is `redis-cli shutdown nosave`, after which `start()` brings it back empty on the
 * same port, as a real restart would.
 */
export class RestartableRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async create(): Promise<RestartableRedis> {
    const redis = new RestartableRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
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
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    this.child = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (
        await this.cli(['ping'])
          .then((out) => out.trim() === 'PONG')
          .catch(() => false)
      )
        return;
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the server without saving: every key (every queue entry) is gone. */
  async wipe(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((r) => child.once('exit', r));
    await this.cli(['shutdown', 'nosave']).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    // Cleared, so a suite does not keep its jest worker alive for 5 s after its last test.
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.child = null;
  }

  cli(args: string[]): Promise<string> {
    return run('redis-cli', ['-p', String(this.port), ...args], { timeout: 5000 }).then((r) => r.stdout);
  }

  async stop(): Promise<void> {
    await this.wipe();
  }
}

/** Deletes every key of a queue prefix, so suites leave nothing behind in the shared Redis. */
export async function deleteQueueKeys(url: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
