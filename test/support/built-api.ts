import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist/apps/api/apps/api/src/main.js');

/** The node flags of `npm run start:api` (and `npm start`), e.g. `--no-memory-reducer`. */
const API_NODE_FLAGS: string[] = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts['start:api']
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

/** Builds the apps when dist/ is missing or stale (CI builds before testing; a fresh checkout may not). */
export function ensureBuiltApi(): void {
  execSync('node scripts/ensure-built.js', { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing after the build`);
}

export interface BuiltApi {
  child: ChildProcess;
  /** stdout and stderr, line by line. */
  lines: string[];
  url: string;
  exited: Promise<number | null>;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The built API (`dist/.../main.js`) as a child process with the node flags of `npm run start:api`,
 * on a port of its own (`PORT=0`), resolved once it logs "Hearth API listening on <url>". `unset`
 * removes variables of the test process's environment (e.g. DATABASE_URL for embedded mode).
 */
export async function startBuiltApi(
  options: { args?: string[]; env?: Record<string, string>; unset?: string[] } = {},
): Promise<BuiltApi> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...options.env };
  for (const name of options.unset ?? []) delete env[name];
  const child = spawn(process.execPath, [...API_NODE_FLAGS, MAIN, ...(options.args ?? [])], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  const push = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    );
    for (const wake of [...waiters]) wake();
  };
  child.stdout!.on('data', push);
  child.stderr!.on('data', push);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const wake of [...waiters]) wake();
  });

  const waitForLine = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => pattern.test(l));
        if (line) return finish(() => resolve(line));
        if (done)
          return finish(() =>
            reject(new Error(`process exited before printing ${pattern}:\n${lines.join('\n')}`)),
          );
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no line ${pattern} in:\n${lines.join('\n')}`))),
        timeoutMs,
      );
      const finish = (fn: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        fn();
      };
      waiters.add(check);
      check();
    });

  const listening = JSON.parse(await waitForLine(/"msg":"Hearth API listening on /)) as { url: string };
  return {
    child,
    lines,
    url: listening.url,
    exited,
    waitForLine,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
