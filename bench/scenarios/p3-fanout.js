'use strict';
// P3: 1,000 SSE clients of one Project on one API process, 50 events/s written through the real
// ProjectEventWriter (commit, then the Redis wake-up); commit-to-client latency against a bare
// node:http broadcaster writing the same bytes to 1,000 responses plus one Redis round trip.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const h = require('../lib/harness');
const seed = require('../lib/seed');
const { openEventWriter } = require('../lib/event-writer');

const CLIENTS = Number(process.env.BENCH_P3_CLIENTS ?? 1000);
const RATE = 50;
const RATIO_GOAL = 2;
const ABSOLUTE_GOAL_MS = 100;

function rssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return null;
  }
}

/** Client processes sharing the streams (parsing 50,000 frames/s is more than one process keeps up with). */
const CLIENT_PROCESSES = Number(process.env.BENCH_P3_CLIENT_PROCESSES ?? 2);

function startClients(url, headers, events, label) {
  const share = Math.ceil(CLIENTS / CLIENT_PROCESSES);
  const processes = [];
  for (let i = 0, left = CLIENTS; left > 0; i++, left -= share) {
    processes.push(
      h.startNode(
        join(__dirname, '../load/sse-clients.js'),
        [JSON.stringify({ url, headers, clients: Math.min(share, left), events })],
        { label: `${label} #${i + 1}`, fdLimit: h.FD_LIMIT_WANTED },
      ),
    );
  }
  return {
    label,
    processes,
    send: (message) => processes.forEach((child) => child.send(message)),
  };
}

async function connectClients(group) {
  const connected = await Promise.all(
    group.processes.map((child) => h.waitForMessage(child, 'connected', 120_000)),
  );
  const failed = connected.reduce((sum, m) => sum + m.failed, 0);
  if (failed > 0) throw new Error(`${group.label}: ${failed} of ${CLIENTS} streams failed to open`);
}

async function finishClients(group) {
  const results = group.processes.map((child) => h.waitForMessage(child, 'result', 60_000));
  group.send({ type: 'finish' });
  const parts = await Promise.all(results);
  await Promise.all(group.processes.map((child) => h.stopChild(child)));
  const sum = (key) => parts.reduce((total, part) => total + part[key], 0);
  return {
    latency: h.summarizeHistograms(parts.map((part) => part.histogram)),
    expected: sum('expected'),
    delivered: sum('delivered'),
    duplicates: sum('duplicates'),
    outOfOrder: sum('outOfOrder'),
    closedEarly: sum('closedEarly'),
    frameSample: parts[0].frameSample,
    frameBytes: parts[0].frameBytes,
  };
}

/** Writes `events` events at RATE/s through ProjectEventWriter; each commit time goes to `clients`. */
async function writeEvents(databaseUrl, project, events, clients) {
  const writer = await openEventWriter(databaseUrl);
  const interval = 1000 / RATE;
  const inFlight = new Set();
  let behind = 0;
  try {
    const start = h.nowMs() + 20;
    for (let n = 0; n < events; n++) {
      const wait = start + n * interval - h.nowMs();
      if (wait > 0) await h.sleep(wait);
      else behind++;
      while (inFlight.size >= 16) await Promise.race(inFlight);
      const write = writer
        .write(project, 'bench.tick', { n, note: 'bench fan-out' })
        .then(({ sequence, committedAt }) => clients.send({ type: 'commit', seq: sequence, t: committedAt }));
      inFlight.add(write);
      const settle = () => inFlight.delete(write);
      write.then(settle, settle);
    }
    await Promise.all(inFlight);
  } finally {
    await writer.close();
  }
  return { behind };
}

async function run(ctx) {
  const owner = await seed.defaultAccount(ctx.db);
  const [project] = await seed.createProjects(ctx.db, owner, 1, 'bench p3');
  const headers = { 'x-api-key': ctx.adminKey };
  const streamUrl = `${ctx.api.baseUrl}/projects/${project.id}/events/stream`;
  const probe = await h.httpGet(streamUrl, headers);
  if (probe.status === 404 && /"code":"not_found"/.test(probe.body)) {
    throw new ctx.NotMeasured('GET /projects/:id/events/stream is not served by the API yet');
  }
  if (probe.status !== 200) throw new Error(`the event stream answered ${probe.status}: ${probe.body}`);

  const seconds = ctx.seconds.p3;
  const events = seconds * RATE;

  // Hearth.
  const rssBefore = rssKb(ctx.api.child.pid);
  const hearthClients = startClients(streamUrl, headers, events, 'p3 clients (hearth)');
  await connectClients(hearthClients);
  await h.sleep(1000);
  const rssAfter = rssKb(ctx.api.child.pid);
  const writing = await writeEvents(ctx.database.url, project, events, hearthClients);
  const hearth = await finishClients(hearthClients);
  if (!hearth.frameSample) throw new Error('P3: no event reached the first client');

  // One Redis PUBLISH -> subscriber round trip.
  const rttChild = h.startNode(
    join(__dirname, '../baselines/redis-rtt.js'),
    [JSON.stringify({ redisUrl: h.REDIS_URL, channel: `${ctx.benchId}:rtt`, count: 300, intervalMs: 10 })],
    { label: 'p3 redis rtt' },
  );
  const redis = await h.waitForMessage(rttChild, 'result', 60_000);

  // The bare broadcaster, writing Hearth's frame bytes.
  const broadcaster = h.startNode(join(__dirname, '../baselines/p3-bare-broadcaster.js'), [], {
    label: 'p3 bare broadcaster',
    fdLimit: h.FD_LIMIT_WANTED,
  });
  let bare;
  try {
    const { port } = await h.waitForMessage(broadcaster, 'listening', 15_000);
    const bareClients = startClients(`http://127.0.0.1:${port}/`, {}, events, 'p3 clients (bare)');
    await connectClients(bareClients);
    await h.sleep(1000);
    const forward = (message) => {
      if (message.type === 'commit') bareClients.send(message);
    };
    broadcaster.on('message', forward);
    const done = h.waitForMessage(broadcaster, 'done', seconds * 1000 + 30_000);
    broadcaster.send({ type: 'start', events, intervalMs: 1000 / RATE, frameTemplate: hearth.frameSample });
    await done;
    broadcaster.off('message', forward);
    bare = await finishClients(bareClients);
  } finally {
    await h.stopChild(broadcaster);
  }

  const limit = RATIO_GOAL * (bare.latency.p99 + redis.latency.p99);
  const complete = hearth.delivered === hearth.expected && hearth.duplicates === 0 && hearth.outOfOrder === 0;
  const pass = hearth.latency.p99 <= limit && hearth.latency.p99 < ABSOLUTE_GOAL_MS && complete;
  const perConnectionKb =
    rssBefore !== null && rssAfter !== null ? h.round((rssAfter - rssBefore) / CLIENTS, 1) : null;
  h.line(
    `P3 hearth SSE commit-to-client (${CLIENTS} clients, ${RATE} events/s, ${seconds}s)  p50=${hearth.latency.p50}ms p99=${hearth.latency.p99}ms delivered=${hearth.delivered}/${hearth.expected} duplicates=${hearth.duplicates} out-of-order=${hearth.outOfOrder}`,
  );
  h.line(
    `P3 baseline bare broadcaster (${hearth.frameBytes}-byte frames)  p50=${bare.latency.p50}ms p99=${bare.latency.p99}ms delivered=${bare.delivered}/${bare.expected}`,
  );
  h.line(`P3 baseline Redis PUBLISH->subscriber  p50=${redis.latency.p50}ms p99=${redis.latency.p99}ms`);
  h.line(
    `P3 p99=${hearth.latency.p99}ms goal<=2x(bare+redis)=${h.round(limit)}ms and <${ABSOLUTE_GOAL_MS}ms, every event once in order ${h.verdict(pass)}`,
  );
  if (perConnectionKb !== null)
    h.line(`P3 API RSS per idle connection=${perConnectionKb}KB target<=60KB (info)`);
  const file = h.writeResult('P3', {
    goal: { p99VsAnchor: `<= ${RATIO_GOAL}x (bare p99 + redis p99)`, absoluteP99Ms: ABSOLUTE_GOAL_MS },
    clients: CLIENTS,
    eventsPerSecond: RATE,
    seconds,
    hearth: { ...hearth, frameSample: undefined, writerSlotsBehind: writing.behind },
    frameSample: hearth.frameSample,
    baseline: { bareBroadcaster: bare, redisRoundTrip: redis },
    limitMs: h.round(limit),
    apiRssKb: { beforeClients: rssBefore, withIdleClients: rssAfter, perConnectionKb },
    pass,
  });
  return { pass, file };
}

module.exports = { id: 'P3', run };
