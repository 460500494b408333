'use strict';
// Shared plumbing of `npm run bench`: the bench database, the API child process, load processes,
// statistics and result files. Every wait here is bounded in time.
const { fork, spawn, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const http = require('node:http');
const { join } = require('node:path');
const pg = require('pg');

const ROOT = join(__dirname, '..', '..');
const DIST_API = join(ROOT, 'dist/apps/api');
const API_MAIN = join(DIST_API, 'apps/api/src/main.js');
/**
 * The node flags of `npm run start:api` (package.json), so the measured API runs as an operator's
 * does (`--no-memory-reducer`: docs/decisions.md "Turn latency").
 */
const API_NODE_FLAGS = require('../../package.json')
  .scripts['start:api'].split(/\s+/)
  .filter((word) => word.startsWith('--'));
const MIGRATE_MAIN = join(DIST_API, 'apps/api/src/migrate.js');
const DIST_WORKER = join(ROOT, 'dist/apps/worker');
const WORKER_MAIN = join(DIST_WORKER, 'apps/worker/src/main.js');
const RESULTS_DIR = join(ROOT, 'bench/results');

const ADMIN_URL = process.env.BENCH_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Sockets needed by the largest scenario (P3: 1,000 SSE clients plus pools). */
const FD_LIMIT_WANTED = 8192;

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across local processes. */
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function databaseUrl(name) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdminClient(fn) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `hearth_bench_<random>`, created empty and migrated by the built migrator. */
async function createBenchDatabase() {
  const name = `hearth_bench_${randomBytes(5).toString('hex')}`;
  await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
  const url = databaseUrl(name);
  execFileSync(process.execPath, [MIGRATE_MAIN], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
  });
  return {
    name,
    url,
    drop: () => withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The soft `ulimit -n` a child started from here would get. */
function currentFdLimit() {
  try {
    const out = execFileSync('bash', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    return out === 'unlimited' ? Infinity : Number(out);
  } catch {
    return 1024;
  }
}

const children = new Set();

function track(child, label) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.label = label;
  return child;
}

/**
 * Starts a Node script as a child with an IPC channel. When the soft fd limit is below what the
 * scenarios need, the child is started through `bash -c 'ulimit -n …; exec node …'` (the limit is per
 * process; the IPC descriptor survives the exec).
 */
function startNode(script, args = [], options = {}) {
  const env = { ...process.env, ...(options.env ?? {}) };
  const stdio = options.stdio ?? ['ignore', 'inherit', 'inherit', 'ipc'];
  let child;
  if (options.fdLimit && currentFdLimit() < options.fdLimit) {
    child = spawn(
      'bash',
      [
        '-c',
        // Up to the hard limit when the wanted value is above it (raising the hard limit needs privileges).
        `ulimit -n ${options.fdLimit} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`,
        process.execPath,
        ...(options.nodeArgs ?? []),
        script,
        ...args,
      ],
      { cwd: ROOT, env, stdio },
    );
  } else {
    child = fork(script, args, { cwd: ROOT, env, stdio, execArgv: options.nodeArgs ?? [] });
  }
  return track(child, options.label ?? script);
}

/** Resolves with the first IPC message of the given type, or rejects on exit or timeout. */
function waitForMessage(child, type, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`${child.label}: no "${type}" within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (message) => {
      if (message && message.type === 'error') done(new Error(`${child.label}: ${message.error}`));
      else if (message && message.type === type) done(null, message);
    };
    // IPC messages sent just before exiting can arrive after 'exit': give them a moment.
    const onExit = (code, signal) =>
      setTimeout(
        () => done(new Error(`${child.label} exited (code ${code}, signal ${signal}) before "${type}"`)),
        500,
      );
    let settled = false;
    function done(error, value) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(value);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/**
 * For load processes: runs `main`, sends its result (or the error) over IPC and only then closes
 * the channel (a large message is still being written when send() returns).
 */
function runChild(main) {
  const send = (message) => new Promise((resolve) => process.send(message, () => resolve()));
  main().then(
    (message) => send(message).then(() => process.disconnect()),
    (error) =>
      send({ type: 'error', error: String(error && error.stack ? error.stack : error) }).then(() => {
        process.exitCode = 1;
        process.disconnect();
      }),
  );
}

function stopChild(child, timeoutMs = 10_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function stopAllChildren() {
  return Promise.all([...children].map((child) => stopChild(child, 5_000)));
}

function httpGet(url, headers = {}, timeoutMs = 5_000) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
        // A stream never ends by itself: the status and headers are all a probe needs.
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await httpGet(url, {}, 2_000);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** The built API (`dist/apps/api/apps/api/src/main.js`) as a child process on a free loopback port. */
async function startApi({ databaseUrl: dbUrl, adminKey, benchId, env = {} }) {
  const port = await freePort();
  const child = startNode(API_MAIN, [], {
    label: 'hearth api',
    fdLimit: FD_LIMIT_WANTED,
    // Diagnostics only: BENCH_API_STDOUT=1 keeps the API's stdout (e.g. with BENCH_API_NODE_ARGS=--trace-gc).
    stdio: ['ignore', process.env.BENCH_API_STDOUT ? 'inherit' : 'ignore', 'inherit', 'ipc'],
    // Diagnostics only: node flags NODE_OPTIONS refuses (BENCH_API_NODE_ARGS="--single-threaded-gc").
    nodeArgs: [...API_NODE_FLAGS, ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean)],
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl,
      REDIS_URL,
      BOOTSTRAP_ADMIN_API_KEY: adminKey,
      QUEUE_PREFIX: benchId,
      NODE_ENV: 'production',
      // Diagnostics only: BENCH_API_LOG_LEVEL=warn drops the access log, BENCH_API_NODE_OPTIONS=--cpu-prof profiles.
      ...(process.env.BENCH_API_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_API_LOG_LEVEL } : {}),
      ...(process.env.BENCH_API_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_API_NODE_OPTIONS } : {}),
      ...env,
    },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await Promise.race([
    waitForHttp(`${baseUrl}/health/ready`, 60_000),
    new Promise((_, reject) =>
      child.once('exit', (code) => reject(new Error(`the API exited with code ${code}`))),
    ),
  ]);
  return { child, baseUrl, port };
}

/**
 * The built worker (`npm run start:worker`: `dist/apps/worker/apps/worker/src/main.js`) as a child
 * process on the bench database and Redis, with `QUEUE_PREFIX=<benchId>` (give the API that feeds it
 * the same). Resolves once it logs `worker started` (its queues consume); its stdout (JSON log lines)
 * is read for that line and then dropped unless BENCH_WORKER_STDOUT=1.
 */
async function startWorker({ databaseUrl: dbUrl, benchId, env = {}, timeoutMs = 60_000 }) {
  const child = startNode(WORKER_MAIN, [], {
    label: 'hearth worker',
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: {
      DATABASE_URL: dbUrl,
      REDIS_URL,
      QUEUE_PREFIX: benchId,
      NODE_ENV: 'production',
      ...env,
    },
  });
  const keep = Boolean(process.env.BENCH_WORKER_STDOUT);
  await new Promise((resolve, reject) => {
    let buffer = '';
    let started = false;
    const timer = setTimeout(
      () => done(new Error(`the worker did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onExit = (code, signal) =>
      done(new Error(`the worker exited (code ${code}, signal ${signal}) before it started`));
    function done(error) {
      if (started) return;
      started = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      if (keep) process.stdout.write(text);
      if (started) return;
      buffer += text;
      let index;
      while ((index = buffer.indexOf('\n')) >= 0) {
        const entry = buffer.slice(0, index);
        buffer = buffer.slice(index + 1);
        if (entry.includes('"msg":"worker started"')) return done(null);
      }
    });
    child.once('exit', onExit);
  });
  return { child };
}

/** CPU time (user + system) a process has used, in ms, from /proc; null where /proc is missing. */
function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

// ---- statistics ------------------------------------------------------------------------------

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? sorted[sorted.length - 1] : NaN),
  };
}

/** Latencies in 0.1 ms buckets (capped at 60 s), as [bucket, count] pairs: small to send, mergeable. */
const BUCKETS_PER_MS = 10;
const MAX_BUCKET = 60_000 * BUCKETS_PER_MS;

function histogramOf(values) {
  const counts = new Map();
  for (const value of values) {
    const bucket = Math.min(MAX_BUCKET, Math.max(0, Math.round(value * BUCKETS_PER_MS)));
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  return [...counts];
}

function summarizeHistograms(histograms) {
  const counts = new Map();
  for (const histogram of histograms) {
    for (const [bucket, count] of histogram) counts.set(bucket, (counts.get(bucket) ?? 0) + count);
  }
  const sorted = [...counts].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  const at = (p) => {
    const rank = Math.max(1, Math.ceil((p / 100) * total));
    let seen = 0;
    for (const [bucket, count] of sorted) {
      seen += count;
      if (seen >= rank) return bucket / BUCKETS_PER_MS;
    }
    return NaN;
  };
  return {
    count: total,
    p50: round(at(50)),
    p99: round(at(99)),
    max: total ? round(sorted[sorted.length - 1][0] / BUCKETS_PER_MS) : NaN,
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function round(value, digits = 2) {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

// ---- output ----------------------------------------------------------------------------------

function line(text) {
  process.stdout.write(`${text}\n`);
}

const verdict = (pass) => (pass ? 'PASS' : 'FAIL');

function writeResult(scenario, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${scenario.toLowerCase()}.json`);
  writeFileSync(file, `${JSON.stringify({ scenario, at: new Date().toISOString(), ...data }, null, 2)}\n`);
  return file;
}

module.exports = {
  ROOT,
  DIST_API,
  API_MAIN,
  DIST_WORKER,
  WORKER_MAIN,
  REDIS_URL,
  FD_LIMIT_WANTED,
  nowMs,
  sleep,
  createBenchDatabase,
  freePort,
  currentFdLimit,
  startNode,
  waitForMessage,
  runChild,
  stopChild,
  stopAllChildren,
  httpGet,
  processCpuMs,
  waitForHttp,
  startApi,
  startWorker,
  percentile,
  summarize,
  histogramOf,
  summarizeHistograms,
  median,
  round,
  line,
  verdict,
  writeResult,
};
