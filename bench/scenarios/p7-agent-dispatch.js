'use strict';
// P7: agent job dispatch. `POST /projects/:id/agent-bindings/:id/run` -> `jobs` row `pending` (committed)
// -> BullMQ add after commit -> the worker claims it `running`, against raw BullMQ `Queue.add` -> a
// `Worker` processor start on the same Redis (bench/baselines/p7-raw-bullmq.js, the consumer options
// Hearth's consumer uses, the same concurrency).
//
// Processes: an API of its own (h.startApi, QUEUE_PREFIX <bench>_p7, ENABLE_AGENT_RUNTIME_WORKER not
// set: it only produces) and the built worker (h.startWorker: the same database, Redis and prefix,
// ENABLE_AGENT_RUNTIME_WORKER=true, the `env` model source pointed at bench/lib/fake-model.js, which
// answers at once: FAKE_CHUNKS=1, FAKE_CHUNK_DELAY_MS=0). One Agent Type (scope_kind project, empty
// defaults: no output targets, no reads) is bound to 21 Projects over HTTP; runs are dry runs, so a run
// claims its row, loads the binding, type, account and Project, calls the model once and records its
// result, and writes nothing else.
//
// add->start, with an idle worker: RUNS sequential runs after WARMUP, each followed by one raw BullMQ
// job (interleaved, so drift on the shared machine hits both alike), with a pause before each so the
// worker is idle again. Hearth's figure is `jobs.started_at - jobs.created_at` (both ms, from the DB:
// created_at is written by the API inside the run's transaction, started_at by the worker's claim);
// the client-side time from sending the POST to started_at is information. The raw figure is the
// processor's start minus the time just before `Queue.add` (h.nowMs, comparable across processes).
// Goal: p50 < 10 ms, p99 < 50 ms, and both <= 3x raw BullMQ.
//
// Throughput: JOBS runs across 20 Projects (the serial scope is <workspace>:<project>:<agent type>, so
// runs of different Projects do not wait for each other), posted by 20 concurrent HTTP clients in
// round-robin Project order; the figure is JOBS / (the last job's finished_at - the first POST), in
// BENCH_ROUNDS rounds alternating with raw BullMQ (the same count added by 20 concurrent `Queue.add`
// callers, a no-op processor, to the last job's completion); medians of the rounds are the figures.
// Goal: Hearth >= 0.3x raw BullMQ. Hearth's runner is not a no-op (see above; the model call is the fake
// model's instant answer).
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Queue } = require('bullmq');
const { sql } = require('kysely');
const h = require('../lib/harness');
const seed = require('../lib/seed');

const GOAL_P50_MS = 10;
const GOAL_P99_MS = 50;
const GOAL_LATENCY_RATIO = 3;
const GOAL_THROUGHPUT_RATIO = 0.3;
const WARMUP = 20;
const knob = (name, fallback, max) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new Error(`${name} must be an integer 1..${max}`);
  return value;
};
const RUNS = knob('BENCH_P7_RUNS', 200, 10_000);
const JOBS = knob('BENCH_P7_JOBS', 1000, 100_000);
const WARMUP_JOBS = 100;
/** Projects of the throughput phase (one more Project takes the sequential runs). */
const PROJECTS = 20;
/** Concurrent HTTP clients (Hearth) and `Queue.add` callers (raw) of the throughput phase. */
const CLIENTS = 20;
/** Before each sequential run: the previous job's BullMQ completion settles, the worker waits idle. */
const IDLE_PAUSE_MS = 20;
const POLL_MS = 5;
const ROUND_POLL_MS = 100;
const ROUND_TIMEOUT_MS = 180_000;
const NOT_SUCCEEDED = new Set(['retry_waiting', 'dead_letter', 'cancelled']);
/** Queues Hearth's worker consumes with the agent runtime on (apps/worker/src/worker-runtime.ts). */
const HEARTH_QUEUES = ['system', 'agent', 'chat'];

/**
 * The per-queue concurrency of the built worker: `npm run start:worker` passes none, so the consumer's
 * default applies (libs/platform/src/queue/bullmq-job-queue.ts). Read from the build, so the raw
 * anchor always runs with the same value.
 */
function hearthWorkerConcurrency() {
  const file = join(h.DIST_WORKER, 'libs/platform/src/queue/bullmq-job-queue.js');
  const match = /concurrency:\s*this\.options\.concurrency\s*\?\?\s*(\d+)/.exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error(`P7 cannot find the worker's default concurrency in ${file}`);
  return Number(match[1]);
}

async function request(baseUrl, key, method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

async function postRun(api, key, binding) {
  const res = await request(
    api.baseUrl,
    key,
    'POST',
    `/projects/${binding.project_id}/agent-bindings/${binding.id}/run`,
    { dry_run: true, trigger_reason: 'bench P7' },
  );
  if (res.status !== 202) throw new Error(`P7 POST .../run answered ${res.status}: ${res.text}`);
  return res.json.job_id;
}

function failedJob(row) {
  return new Error(`P7 agent job ${row.id} is ${row.status}: ${row.last_error_code} ${row.last_error}`);
}

/** Polls the job row until it has succeeded (any other end, or a retry, is an error). */
async function waitSucceeded(db, jobId) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const row = await db
      .selectFrom('jobs')
      .select(['id', 'status', 'created_at', 'started_at', 'finished_at', 'last_error_code', 'last_error'])
      .select('result')
      .where('id', '=', jobId)
      .executeTakeFirst();
    if (row && row.status === 'succeeded') return row;
    if (row && NOT_SUCCEEDED.has(row.status)) throw failedJob(row);
    if (Date.now() > deadline) throw new Error(`P7 agent job ${jobId} did not succeed within 30 s`);
    await h.sleep(POLL_MS);
  }
}

/** Polls until every job of `ids` has succeeded; the last finished_at (ms, worker clock). */
async function waitAllSucceeded(db, ids) {
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (;;) {
    const { rows } = await sql`SELECT status, count(*)::int AS n, max(finished_at) AS last
      FROM jobs WHERE id = ANY(${ids}::text[]) GROUP BY status`.execute(db);
    const bad = rows.find((r) => NOT_SUCCEEDED.has(r.status));
    if (bad) {
      const row = await db
        .selectFrom('jobs')
        .select(['id', 'status', 'last_error_code', 'last_error'])
        .where('id', 'in', ids)
        .where('status', '=', bad.status)
        .executeTakeFirstOrThrow();
      throw failedJob(row);
    }
    const done = rows.find((r) => r.status === 'succeeded');
    if (done && done.n === ids.length) return Number(done.last);
    if (Date.now() > deadline)
      throw new Error(
        `P7 ${ids.length} agent jobs not all succeeded within ${ROUND_TIMEOUT_MS} ms: ${JSON.stringify(rows)}`,
      );
    await h.sleep(ROUND_POLL_MS);
  }
}

/** The raw worker counts the next `count` completions as round `round`. */
async function expectRaw(raw, round, count) {
  const ack = h.waitForMessage(raw, 'expecting', 5_000);
  raw.send({ type: 'expect', round, count });
  const message = await ack;
  if (message.round !== round) throw new Error(`P7 raw worker acknowledged round ${message.round}`);
}

let rawSerial = 0;
const rawJobId = () => `p7raw_${++rawSerial}`;

/** One raw BullMQ job on an idle worker: processor start minus the time just before `Queue.add`. */
async function rawSample(raw, queue) {
  const round = `one-${rawSerial + 1}`;
  await expectRaw(raw, round, 1);
  const drained = h.waitForMessage(raw, 'drained', 10_000);
  const id = rawJobId();
  const t0 = h.nowMs();
  await queue.add('agent.run', { job_id: id }, { jobId: id });
  const message = await drained;
  return message.starts[0][1] - t0;
}

/** One Hearth run on an idle worker: started_at - created_at, and POST sent -> started_at. */
async function hearthSample(ctx, api, binding) {
  const t0 = h.nowMs();
  const jobId = await postRun(api, ctx.adminKey, binding);
  const row = await waitSucceeded(ctx.db, jobId);
  return {
    row,
    addToStart: Number(row.started_at) - Number(row.created_at),
    clientToStart: Number(row.started_at) - t0,
  };
}

/** `count` items handed to `clients` concurrent loops in index order; resolves when all are done. */
async function inParallel(count, clients, each) {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) await each(i);
    }),
  );
}

async function hearthRound(ctx, api, bindings, count) {
  const ids = new Array(count);
  const t0 = h.nowMs();
  await inParallel(count, CLIENTS, async (i) => {
    ids[i] = await postRun(api, ctx.adminKey, bindings[i % bindings.length]);
  });
  const posted = h.nowMs();
  const last = await waitAllSucceeded(ctx.db, ids);
  const seconds = (last - t0) / 1000;
  return {
    jobs: count,
    seconds: h.round(seconds, 3),
    jobsPerSecond: h.round(count / seconds, 1),
    postsPerSecond: h.round(count / ((posted - t0) / 1000), 1),
  };
}

async function rawRound(raw, queue, count, round) {
  await expectRaw(raw, round, count);
  const drained = h.waitForMessage(raw, 'drained', ROUND_TIMEOUT_MS);
  const t0 = h.nowMs();
  await inParallel(count, CLIENTS, async () => {
    const id = rawJobId();
    await queue.add('agent.run', { job_id: id }, { jobId: id });
  });
  const added = h.nowMs();
  const message = await drained;
  const seconds = (message.at - t0) / 1000;
  return {
    jobs: count,
    seconds: h.round(seconds, 3),
    jobsPerSecond: h.round(count / seconds, 1),
    addsPerSecond: h.round(count / ((added - t0) / 1000), 1),
  };
}

/** CPU ms used so far by the given processes and by the bench database's Postgres backends. */
async function cpuReader(db, pids) {
  const backends = await sql`SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(db);
  return {
    processes: Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, h.processCpuMs(pid)])),
    postgres: new Map(backends.rows.map((r) => [r.pid, h.processCpuMs(r.pid)])),
  };
}

function cpuPerJob(before, after, jobs) {
  const out = {};
  for (const [name, ms] of Object.entries(after.processes)) {
    const was = before.processes[name];
    out[name] = ms === null || was === null ? null : h.round((ms - was) / jobs, 3);
  }
  // Backends that came or went between the readings (pool connections) are left out.
  let postgres = 0;
  for (const [pid, ms] of after.postgres) {
    const was = before.postgres.get(pid);
    if (ms !== null && was !== undefined && was !== null) postgres += ms - was;
  }
  out.postgres = h.round(postgres / jobs, 3);
  return out;
}

async function dropQueues(prefix, names) {
  for (const name of names) {
    const queue = new Queue(name, { connection: { url: h.REDIS_URL, maxRetriesPerRequest: 1 }, prefix });
    try {
      await queue.obliterate({ force: true });
    } catch {
      // best effort: the keys carry the bench's own prefix
    } finally {
      await queue.close().catch(() => undefined);
    }
  }
}

async function run(ctx) {
  const probe = await request(
    ctx.api.baseUrl,
    ctx.adminKey,
    'POST',
    '/projects/prj_probe/agent-bindings/agb_probe/run',
    {},
  );
  // An unserved route is told apart from a missing Project by the router's own message.
  if (probe.status === 404 && /^Cannot POST/.test(probe.json?.error?.message ?? ''))
    throw new ctx.NotMeasured('POST /projects/:id/agent-bindings/:binding_id/run is not served');

  const concurrency = hearthWorkerConcurrency();
  const hearthPrefix = `${ctx.benchId}_p7`;
  const rawPrefix = `${ctx.benchId}_p7raw`;
  let fake = null;
  let api = null;
  let worker = null;
  let raw = null;
  let queue = null;
  try {
    fake = h.startNode(join(__dirname, '../lib/fake-model.js'), [], {
      label: 'fake model',
      env: { FAKE_CHUNKS: '1', FAKE_CHUNK_DELAY_MS: '0' },
    });
    const { port } = await h.waitForMessage(fake, 'ready', 10_000);
    api = await h.startApi({
      databaseUrl: ctx.database.url,
      adminKey: ctx.adminKey,
      benchId: hearthPrefix,
    });
    worker = (
      await h.startWorker({
        databaseUrl: ctx.database.url,
        benchId: hearthPrefix,
        env: {
          ENABLE_AGENT_RUNTIME_WORKER: 'true',
          LLM_PROVIDER: 'openai',
          LLM_MODEL: 'fake-model',
          LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
          LLM_API_KEY: 'sk-bench-p7',
          ALLOW_PRIVATE_BASE_URL: 'true',
        },
      })
    ).child;
    raw = h.startNode(
      join(__dirname, '../baselines/p7-raw-bullmq.js'),
      [JSON.stringify({ redisUrl: h.REDIS_URL, prefix: rawPrefix, queue: 'agent', concurrency })],
      { label: 'p7 raw bullmq worker' },
    );
    await h.waitForMessage(raw, 'ready', 30_000);
    // The producer as Hearth's (libs/platform/src/queue/bullmq-job-queue.ts).
    queue = new Queue('agent', {
      connection: {
        url: h.REDIS_URL,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectionName: 'bench-p7-raw-queue',
      },
      prefix: rawPrefix,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
    });
    await queue.waitUntilReady();

    // Fixtures: one Agent Type of the default Workspace bound to 21 Projects, over HTTP.
    const owner = await seed.defaultAccount(ctx.db);
    const projects = await seed.createProjects(ctx.db, owner, PROJECTS + 1, 'P7 agents');
    const type = await request(
      api.baseUrl,
      ctx.adminKey,
      'POST',
      `/workspaces/${owner.workspace.id}/agent-types`,
      { key: `p7-bench-${ctx.benchId}`, name: 'P7 bench agent', scope_kind: 'project', defaults: {} },
    );
    if (type.status !== 201) throw new Error(`P7 POST agent-types answered ${type.status}: ${type.text}`);
    const bindings = [];
    for (const project of projects) {
      const res = await request(api.baseUrl, ctx.adminKey, 'POST', `/projects/${project.id}/agent-bindings`, {
        agent_type_id: type.json.id,
      });
      if (res.status !== 201) throw new Error(`P7 POST agent-bindings answered ${res.status}: ${res.text}`);
      bindings.push(res.json);
    }
    const [sequential, ...spread] = bindings;

    // Warm-up, and a check that a run really went through the model and recorded its result.
    for (let i = 0; i < WARMUP; i++) {
      await h.sleep(IDLE_PAUSE_MS);
      const { row } = await hearthSample(ctx, api, sequential);
      if (i === 0 && (row.result?.dry_run !== true || row.result?.model?.model !== 'fake-model'))
        throw new Error(
          `P7 the first run's result is not a dry run through the fake model: ${JSON.stringify(row.result)}`,
        );
      await h.sleep(IDLE_PAUSE_MS);
      await rawSample(raw, queue);
    }

    // add->start with an idle worker, Hearth and raw interleaved.
    const hearthSamples = [];
    const rawSamples = [];
    for (let i = 0; i < RUNS; i++) {
      await h.sleep(IDLE_PAUSE_MS);
      hearthSamples.push(await hearthSample(ctx, api, sequential));
      await h.sleep(IDLE_PAUSE_MS);
      rawSamples.push(await rawSample(raw, queue));
    }
    const hearthLatency = h.summarize(hearthSamples.map((s) => s.addToStart));
    const clientLatency = h.summarize(hearthSamples.map((s) => s.clientToStart));
    const rawLatency = h.summarize(rawSamples);
    const latencyRatio = {
      p50: h.round(hearthLatency.p50 / rawLatency.p50),
      p99: h.round(hearthLatency.p99 / rawLatency.p99),
    };
    const absoluteOk = hearthLatency.p50 < GOAL_P50_MS && hearthLatency.p99 < GOAL_P99_MS;
    const ratioOk = latencyRatio.p50 <= GOAL_LATENCY_RATIO && latencyRatio.p99 <= GOAL_LATENCY_RATIO;
    h.line(
      `P7 add->start (${RUNS} sequential runs after ${WARMUP} warm-ups, idle worker, interleaved): ` +
        `hearth created_at->started_at p50=${hearthLatency.p50} p99=${hearthLatency.p99} max=${hearthLatency.max} ms ` +
        `(goal p50 < ${GOAL_P50_MS}, p99 < ${GOAL_P99_MS}) ${h.verdict(absoluteOk)}`,
    );
    h.line(
      `P7 add->start raw BullMQ Queue.add->processor start p50=${rawLatency.p50} p99=${rawLatency.p99} max=${rawLatency.max} ms; ` +
        `ratio p50=${latencyRatio.p50}x p99=${latencyRatio.p99}x (goal ≤ ${GOAL_LATENCY_RATIO}x) ${h.verdict(ratioOk)}`,
    );
    h.line(
      `P7 add->start client side (information; POST sent -> started_at, the API's transaction included): ` +
        `p50=${clientLatency.p50} p99=${clientLatency.p99} ms (DB timestamps are whole ms)`,
    );

    // Throughput: a warm-up round each, then rounds alternating Hearth and raw.
    const pids = { api: api.child.pid, worker: worker.pid };
    await hearthRound(ctx, api, spread, WARMUP_JOBS);
    await rawRound(raw, queue, WARMUP_JOBS, 'warm-up');
    const rounds = [];
    for (let round = 0; round < ctx.rounds; round++) {
      await h.sleep(500);
      const cpuBefore = await cpuReader(ctx.db, pids);
      const hearth = await hearthRound(ctx, api, spread, JOBS);
      hearth.cpuPerJobMs = cpuPerJob(cpuBefore, await cpuReader(ctx.db, pids), JOBS);
      await h.sleep(500);
      const rawCpuBefore = h.processCpuMs(raw.pid);
      const rawResult = await rawRound(raw, queue, JOBS, `round-${round}`);
      const rawCpuAfter = h.processCpuMs(raw.pid);
      rawResult.workerCpuPerJobMs =
        rawCpuBefore === null || rawCpuAfter === null
          ? null
          : h.round((rawCpuAfter - rawCpuBefore) / JOBS, 3);
      const ratio = h.round(hearth.jobsPerSecond / rawResult.jobsPerSecond, 3);
      rounds.push({ hearth, raw: rawResult, ratio });
      h.line(
        `P7 throughput round #${round + 1} (information): hearth ${hearth.jobsPerSecond} jobs/s ` +
          `(${hearth.seconds} s; POSTs answered at ${hearth.postsPerSecond}/s), raw BullMQ ${rawResult.jobsPerSecond} jobs/s ` +
          `(adds at ${rawResult.addsPerSecond}/s), ratio ${ratio}; CPU per Hearth job: API ${hearth.cpuPerJobMs.api} ms, ` +
          `worker ${hearth.cpuPerJobMs.worker} ms, Postgres ${hearth.cpuPerJobMs.postgres} ms; raw worker ${rawResult.workerCpuPerJobMs} ms`,
      );
    }
    const throughput = {
      hearthJobsPerSecond: h.round(h.median(rounds.map((r) => r.hearth.jobsPerSecond)), 1),
      rawJobsPerSecond: h.round(h.median(rounds.map((r) => r.raw.jobsPerSecond)), 1),
      ratio: h.round(h.median(rounds.map((r) => r.ratio)), 3),
    };
    const throughputOk = throughput.ratio >= GOAL_THROUGHPUT_RATIO;
    h.line(
      `P7 throughput (${JOBS} runs across ${PROJECTS} Projects from ${CLIENTS} clients, worker concurrency ${concurrency}, ` +
        `medians of ${rounds.length} rounds; first POST -> last job succeeded): hearth ${throughput.hearthJobsPerSecond} jobs/s ` +
        `(not a no-op: claim, load, one call to the fake model's instant answer, record; dry runs), ` +
        `raw BullMQ no-op processor ${throughput.rawJobsPerSecond} jobs/s; ratio ${throughput.ratio} ` +
        `(goal ≥ ${GOAL_THROUGHPUT_RATIO}) ${h.verdict(throughputOk)}`,
    );

    const pass = absoluteOk && ratioOk && throughputOk;
    const file = h.writeResult('P7', {
      workerConcurrency: concurrency,
      goal: {
        addToStart: { p50Ms: GOAL_P50_MS, p99Ms: GOAL_P99_MS, vsRawBullMq: GOAL_LATENCY_RATIO },
        throughputVsRawBullMq: GOAL_THROUGHPUT_RATIO,
      },
      addToStart: {
        runs: RUNS,
        warmup: WARMUP,
        hearth: hearthLatency,
        clientToStart: clientLatency,
        raw: rawLatency,
        ratio: latencyRatio,
        pass: absoluteOk && ratioOk,
      },
      throughput: {
        jobs: JOBS,
        projects: PROJECTS,
        clients: CLIENTS,
        rounds,
        ...throughput,
        pass: throughputOk,
      },
      pass,
    });
    return { pass, file };
  } finally {
    if (queue) await queue.close().catch(() => undefined);
    await h.stopChild(raw);
    await h.stopChild(worker);
    await h.stopChild(api && api.child);
    await h.stopChild(fake);
    await dropQueues(rawPrefix, ['agent']);
    await dropQueues(hearthPrefix, HEARTH_QUEUES);
  }
}

module.exports = { id: 'P7', run };
