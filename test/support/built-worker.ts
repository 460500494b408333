import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'dist/apps/worker/apps/worker/src/main.js');

export interface BuiltWorker {
  child: ChildProcess;
  /** stdout and stderr, line by line. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL (no shutdown code runs: the queue lock and the ledger lease are left to expire). */
  kill(): Promise<void>;
  /** SIGTERM, then the exit. */
  stop(): Promise<void>;
}

/**
 * The built worker (`npm run start:worker`, `dist/.../worker/.../main.js`) as a child process, resolved
 * once it logs "worker started". Build first with `ensureBuiltApi()` (built-api.ts builds both apps).
 * `env` is added to the test process's environment.
 */
export async function startBuiltWorker(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<BuiltWorker> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let wake: (() => void) | null = null;
  const push = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0),
    );
    wake?.();
  };
  child.stdout!.on('data', push);
  child.stderr!.on('data', push);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => {
    gone = true;
    wake?.();
  });

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`no "worker started" in:\n${lines.join('\n')}`)),
      timeoutMs,
    );
    const finish = (error?: Error) => {
      clearTimeout(timer);
      wake = null;
      if (error) {
        if (child.exitCode === null) child.kill('SIGKILL');
        reject(error);
      } else resolve();
    };
    wake = () => {
      if (lines.some((l) => l.includes('"msg":"worker started"'))) finish();
      else if (gone) finish(new Error(`the worker exited before it started:\n${lines.join('\n')}`));
    };
    wake();
  });

  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { child, lines, exited, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}

/**
 * The environment of a built worker that runs `agent.run` jobs of a test app's queue against the fake
 * model, with a short ledger lease and queue lock (JOB_LEASE_MS, JOB_LOCK_DURATION_MS), maintenance off
 * (no reconciler pass but the one at start), and debug logs (the ledger logs a delivery that came while
 * a lease was live). Used by the R1 fault tests.
 */
export function agentWorkerEnv(input: {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  modelBaseUrl: string;
  leaseMs: number;
  lockMs: number;
}): Record<string, string> {
  return {
    DATABASE_URL: input.databaseUrl,
    REDIS_URL: input.redisUrl,
    QUEUE_PREFIX: input.queuePrefix,
    ENABLE_AGENT_RUNTIME_WORKER: 'true',
    ENABLE_RUNTIME_MAINTENANCE: 'false',
    LLM_PROVIDER: 'openai',
    LLM_MODEL: 'fake-model',
    LLM_BASE_URL: input.modelBaseUrl,
    LLM_API_KEY: 'sk-fake-agents-0123456789abcdef',
    ALLOW_PRIVATE_BASE_URL: 'true',
    JOB_LEASE_MS: String(input.leaseMs),
    JOB_LOCK_DURATION_MS: String(input.lockMs),
    LOG_LEVEL: 'debug',
  };
}
