'use strict';
// P2 load process: `concurrency` writers appending events to random Projects for `seconds`.
//   mode "hearth": projectEventsRepository.append inside inTransaction, from the built libraries (the
//                  SQL of ProjectEventWriter: counter row bump + insert, one transaction per event);
//   mode "plain":  plain autocommit single-row INSERTs (global nextval) into bench_plain_events, a
//                  table shaped like project_events, through a bare pg pool.
// argv[2]: JSON {databaseUrl, mode, projects: [{id, workspace_id}], concurrency, seconds, warmSeconds?}
// The first `warmSeconds` (both modes alike) are written and not counted: the process is new in
// every round, and its JIT-compiled path, not its warm-up, is what the round measures.
const pg = require('pg');
const { nowMs, runChild } = require('../lib/harness');
const dist = require('../lib/dist');

const PLAIN_INSERT = `INSERT INTO bench_plain_events (id, workspace_id, project_id, sequence, type, visibility,
  source, payload, created_at) VALUES ($1, $2, $3, nextval('bench_plain_sequence'), $4, $5, $6, $7::jsonb, $8)`;

async function main() {
  const { databaseUrl, mode, projects, concurrency, seconds, warmSeconds = 0 } = JSON.parse(process.argv[2]);
  const { newId, ID_PREFIX } = dist.domain();
  let append;
  let close;
  if (mode === 'hearth') {
    const { openDatabase, inTransaction, projectEventsRepository } = dist.persistence();
    const handle = await openDatabase({
      url: databaseUrl,
      poolSize: concurrency,
      applicationName: 'bench-p2',
    });
    append = (project, n) =>
      inTransaction(handle.db, ({ tx }) =>
        projectEventsRepository.append(tx, {
          id: newId(ID_PREFIX.event),
          workspace_id: project.workspace_id,
          project_id: project.id,
          type: 'bench.appended',
          visibility: 'project',
          source: 'system',
          payload: JSON.stringify({ n, note: 'bench' }),
          created_at: Date.now(),
        }),
      );
    close = () => handle.close();
  } else {
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: concurrency,
      application_name: 'bench-p2',
    });
    append = (project, n) =>
      pool.query(PLAIN_INSERT, [
        newId(ID_PREFIX.event),
        project.workspace_id,
        project.id,
        'bench.appended',
        'project',
        'system',
        JSON.stringify({ n, note: 'bench' }),
        Date.now(),
      ]);
    close = () => pool.end();
  }

  let latencies = [];
  let count = 0;
  let errors = 0;
  let firstError = null;
  const writers = (until) => {
    const writer = async () => {
      while (nowMs() < until) {
        const project = projects[Math.floor(Math.random() * projects.length)];
        const t0 = nowMs();
        try {
          await append(project, count);
          latencies.push(nowMs() - t0);
          count++;
        } catch (error) {
          errors++;
          firstError ??= String(error);
          if (errors > 100) throw new Error(`too many errors, first: ${firstError}`, { cause: error });
        }
      }
    };
    return Promise.all(Array.from({ length: concurrency }, writer));
  };
  if (warmSeconds > 0) {
    await writers(nowMs() + warmSeconds * 1000);
    latencies = [];
    count = 0;
  }
  const started = nowMs();
  await writers(started + seconds * 1000);
  const elapsed = (nowMs() - started) / 1000;
  await close();
  return { type: 'result', count, errors, firstError, seconds: elapsed, latencies };
}

runChild(main);
