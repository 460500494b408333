'use strict';
// P4: resume the event stream 20,000 events behind with `Last-Event-ID`: catch-up time and rows/s
// against raw keyset paging of the same table; then one live event, checking the handover has no
// gap and no duplicate.
const { join } = require('node:path');
const { sql } = require('kysely');
const h = require('../lib/harness');
const seed = require('../lib/seed');
const { openEventWriter } = require('../lib/event-writer');

const BEHIND = 20_000;
const GOAL = 0.5;

async function fixture(db, project) {
  const now = Date.now();
  // One set-based insert of the log and its counter row (the same table and columns the writer fills).
  await sql`
    INSERT INTO project_events (id, workspace_id, project_id, sequence, type, visibility, source, payload, created_at)
    SELECT 'evt_bench' || lpad(g::text, 8, '0'), ${project.workspace_id}, ${project.id}, g, 'bench.replayed',
      'project', 'system', jsonb_build_object('n', g, 'note', 'bench replay fixture'), ${now}::bigint + g
    FROM generate_series(1, ${BEHIND + 1}) AS g`.execute(db);
  await sql`INSERT INTO project_event_counters (project_id, last_sequence) VALUES (${project.id}, ${BEHIND + 1})`.execute(
    db,
  );
  await sql`ANALYZE project_events`.execute(db);
  return BEHIND + 1;
}

async function resumeHearth(ctx, url, headers, writer, project, target) {
  const child = h.startNode(
    join(__dirname, '../load/p4-resume-client.js'),
    [JSON.stringify({ url, headers, lastEventId: target - BEHIND, target, timeoutMs: 120_000 })],
    { label: 'p4 resume client' },
  );
  const result = h.waitForMessage(child, 'result', 130_000);
  await h.waitForMessage(child, 'caught-up', 125_000);
  const { sequence, committedAt } = await writer.write(project, 'bench.live', {
    note: 'bench live after resume',
  });
  if (sequence !== target + 1)
    throw new Error(`P4: the live event got sequence ${sequence}, expected ${target + 1}`);
  child.send({ type: 'commit', seq: sequence, t: committedAt });
  const r = await result;
  if (!r.exact)
    throw new Error(
      `P4: the resumed stream was not exactly ${target - BEHIND + 1}..${target + 1} (${r.received} ids)`,
    );
  return {
    rows: r.rows,
    ms: h.round(r.catchUpMs),
    rowsPerSecond: h.round((r.rows / r.catchUpMs) * 1000),
    handoverMs: h.round(r.handoverMs),
    exact: r.exact,
  };
}

async function pageRaw(ctx, project, target) {
  const child = h.startNode(
    join(__dirname, '../baselines/p4-keyset-pager.js'),
    [
      JSON.stringify({
        databaseUrl: ctx.database.url,
        projectId: project.id,
        after: target - BEHIND,
        target,
      }),
    ],
    { label: 'p4 keyset pager' },
  );
  const r = await h.waitForMessage(child, 'result', 120_000);
  if (r.rows !== BEHIND) throw new Error(`P4 baseline paged ${r.rows} rows, expected ${BEHIND}`);
  return { rows: r.rows, ms: h.round(r.ms), rowsPerSecond: h.round((r.rows / r.ms) * 1000) };
}

async function run(ctx) {
  const owner = await seed.defaultAccount(ctx.db);
  const [project] = await seed.createProjects(ctx.db, owner, 1, 'bench p4');
  const headers = { 'x-api-key': ctx.adminKey };
  const url = `${ctx.api.baseUrl}/projects/${project.id}/events/stream`;
  const probe = await h.httpGet(url, { ...headers, 'last-event-id': '999999999' });
  if (probe.status === 404 && /"code":"not_found"/.test(probe.body)) {
    throw new ctx.NotMeasured('GET /projects/:id/events/stream is not served by the API yet');
  }
  if (probe.status !== 200) throw new Error(`the event stream answered ${probe.status}: ${probe.body}`);

  let target = await fixture(ctx.db, project);
  const writer = await openEventWriter(ctx.database.url, 2);
  try {
    // Warm-up (caches, JIT), then alternating rounds; each resumes exactly BEHIND events back.
    await resumeHearth(ctx, url, headers, writer, project, target);
    target++;
    await pageRaw(ctx, project, target);
    const rounds = [];
    for (let i = 0; i < ctx.rounds; i++) {
      const hearth = await resumeHearth(ctx, url, headers, writer, project, target);
      target++;
      const baseline = await pageRaw(ctx, project, target);
      rounds.push({ hearth, baseline, ratio: h.round(hearth.rowsPerSecond / baseline.rowsPerSecond, 3) });
    }
    const med = (side, key) => h.median(rounds.map((r) => r[side][key]));
    const hearth = {
      rowsPerSecond: med('hearth', 'rowsPerSecond'),
      ms: med('hearth', 'ms'),
      handoverMs: med('hearth', 'handoverMs'),
    };
    const baseline = { rowsPerSecond: med('baseline', 'rowsPerSecond'), ms: med('baseline', 'ms') };
    const ratio = hearth.rowsPerSecond / baseline.rowsPerSecond;
    const exact = rounds.every((r) => r.hearth.exact);
    const pass = ratio >= GOAL && exact;
    h.line(
      `P4 hearth stream resume ${BEHIND} behind (Last-Event-ID)  catch-up=${h.round(hearth.ms, 0)}ms rows/s=${h.round(hearth.rowsPerSecond, 0)} live handover=${hearth.handoverMs}ms`,
    );
    h.line(
      `P4 baseline raw keyset paging (LIMIT 500)  time=${h.round(baseline.ms, 0)}ms rows/s=${h.round(baseline.rowsPerSecond, 0)}`,
    );
    h.line(`P4 ratio=${ratio.toFixed(2)} goal>=${GOAL} ${h.verdict(ratio >= GOAL)}`);
    h.line(
      `P4 handover check: ids exactly after..live, no gap or duplicate, in every round: ${h.verdict(exact)}`,
    );
    const file = h.writeResult('P4', {
      goal: { ratio: GOAL },
      behind: BEHIND,
      hearth,
      baseline,
      ratio: h.round(ratio, 3),
      handoverExact: exact,
      pass,
      rounds,
    });
    return { pass, file };
  } finally {
    await writer.close();
  }
}

module.exports = { id: 'P4', run };
