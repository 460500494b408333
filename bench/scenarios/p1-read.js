'use strict';
// P1: authenticated `GET /projects/:id` under 50 connections, against a bare node:http + pg server
// running the same queries; A/B rounds alternate, medians reported.
const { join } = require('node:path');
const h = require('../lib/harness');
const seed = require('../lib/seed');

const CONNECTIONS = 50;
const GOAL = 0.6;
const P99_TARGET = 1.5;

/** One autocannon run from its own process; `serverPid`'s CPU time per request is recorded too. */
async function load(url, headers, seconds, label, serverPid) {
  const cpuBefore = h.processCpuMs(serverPid);
  const child = h.startNode(
    join(__dirname, '../load/http-load.js'),
    [JSON.stringify({ url, headers, connections: CONNECTIONS, seconds })],
    { label: `p1 load (${label})` },
  );
  const result = await h.waitForMessage(child, 'result', seconds * 1000 + 60_000);
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `P1 ${label}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  const cpuAfter = h.processCpuMs(serverPid);
  return {
    cpuMsPerRequest:
      cpuBefore === null || cpuAfter === null
        ? null
        : h.round((cpuAfter - cpuBefore) / result.requestsTotal, 3),
    requestsPerSecond: h.round(result.requestsPerSecond),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requestsTotal,
  };
}

async function run(ctx) {
  const owner = await seed.defaultAccount(ctx.db);
  const [project] = await seed.createProjects(ctx.db, owner, 1, 'bench p1');
  const member = await seed.createMemberClient(ctx.db, { account: owner.account, project, role: 'observer' });
  const headers = { 'x-api-key': member.apiKey };
  const hearthUrl = `${ctx.api.baseUrl}/projects/${project.id}`;

  const probe = await h.httpGet(hearthUrl, headers);
  if (probe.status === 404 && /"code":"not_found"/.test(probe.body)) {
    throw new ctx.NotMeasured('GET /projects/:id is not served by the API yet');
  }
  if (probe.status !== 200) throw new Error(`GET /projects/:id answered ${probe.status}: ${probe.body}`);

  const bare = h.startNode(join(__dirname, '../baselines/p1-bare-server.js'), [], {
    label: 'p1 bare server',
    env: { DATABASE_URL: ctx.database.url },
  });
  try {
    const { port } = await h.waitForMessage(bare, 'listening', 15_000);
    const bareUrl = `http://127.0.0.1:${port}/projects/${project.id}`;
    const bareProbe = await h.httpGet(bareUrl, headers);
    if (bareProbe.status !== 200)
      throw new Error(`bare server answered ${bareProbe.status}: ${bareProbe.body}`);

    await load(hearthUrl, headers, 3, 'hearth warm-up', ctx.api.child.pid);
    await load(bareUrl, headers, 3, 'baseline warm-up', bare.pid);
    const seconds = ctx.seconds.p1;
    const rounds = [];
    for (let i = 0; i < ctx.rounds; i++) {
      const hearth = await load(hearthUrl, headers, seconds, 'hearth', ctx.api.child.pid);
      const baseline = await load(bareUrl, headers, seconds, 'baseline', bare.pid);
      rounds.push({
        hearth,
        baseline,
        ratio: h.round(hearth.requestsPerSecond / baseline.requestsPerSecond, 3),
      });
    }
    const med = (side, key) => h.median(rounds.map((r) => r[side][key]));
    const summary = (side) => ({
      requestsPerSecond: med(side, 'requestsPerSecond'),
      p50: med(side, 'p50'),
      p99: med(side, 'p99'),
      cpuMsPerRequest: rounds[0][side].cpuMsPerRequest === null ? null : med(side, 'cpuMsPerRequest'),
    });
    const hearth = summary('hearth');
    const baseline = summary('baseline');
    const ratio = hearth.requestsPerSecond / baseline.requestsPerSecond;
    const p99Ratio = hearth.p99 / baseline.p99;
    const pass = ratio >= GOAL;
    h.line(
      `P1 hearth GET /projects/:id  req/s=${h.round(hearth.requestsPerSecond, 0)} p50=${hearth.p50}ms p99=${hearth.p99}ms`,
    );
    h.line(
      `P1 baseline node:http+pg  req/s=${h.round(baseline.requestsPerSecond, 0)} p50=${baseline.p50}ms p99=${baseline.p99}ms`,
    );
    h.line(`P1 ratio=${ratio.toFixed(2)} goal>=${GOAL} ${h.verdict(pass)}`);
    if (hearth.cpuMsPerRequest !== null) {
      h.line(
        `P1 server CPU per request hearth=${hearth.cpuMsPerRequest}ms baseline=${baseline.cpuMsPerRequest}ms (info)`,
      );
    }
    h.line(
      `P1 p99 ratio=${p99Ratio.toFixed(2)} target<=${P99_TARGET} ${p99Ratio <= P99_TARGET ? 'ok' : 'above target'} (info)`,
    );
    const file = h.writeResult('P1', {
      goal: { ratio: GOAL, p99RatioTarget: P99_TARGET },
      connections: CONNECTIONS,
      roundSeconds: seconds,
      caller: 'a non-default Client with an observer membership (key lookup, project read, membership check)',
      hearth,
      baseline,
      ratio: h.round(ratio, 3),
      p99Ratio: h.round(p99Ratio, 3),
      pass,
      rounds,
    });
    return { pass, file };
  } finally {
    await h.stopChild(bare);
  }
}

module.exports = { id: 'P1', run };
