'use strict';
// `npm run bench`: builds if needed, creates its own database (hearth_bench_<random>, migrated by the
// built migrator, dropped at the end), starts the built API as a child process on loopback, runs the
// scenarios of issue 2 (P1-P4) and prints one line per figure; JSON goes to bench/results/<id>.json.
//
//   npm run bench                 all scenarios
//   npm run bench -- P1 P3        some of them
//   BENCH_ROUNDS=5 BENCH_P1_SECONDS=10 BENCH_P2_SECONDS=6 BENCH_P3_SECONDS=15   (defaults)
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');
const h = require('./lib/harness');

const SCENARIOS = [
  require('./scenarios/p1-read'),
  require('./scenarios/p2-append'),
  require('./scenarios/p3-fanout'),
  require('./scenarios/p4-resume'),
  require('./scenarios/library'),
  require('./scenarios/lorebook'),
  require('./scenarios/profiles'),
  require('./scenarios/chat'),
  require('./scenarios/dry-run'),
  require('./scenarios/prompt'),
  require('./scenarios/p7-agent-dispatch'),
];

/** A scenario whose route does not exist yet: reported as not measured, never as a failure. */
class NotMeasured extends Error {}

const int = (name, fallback, max) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new Error(`${name} must be an integer 1..${max}`);
  return value;
};

async function main() {
  const wanted = process.argv.slice(2).map((a) => a.toUpperCase());
  const unknown = wanted.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length)
    throw new Error(
      `unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.id).join(' ')}`,
    );
  const selected = wanted.length ? SCENARIOS.filter((s) => wanted.includes(s.id)) : SCENARIOS;

  execFileSync(process.execPath, [join(h.ROOT, 'scripts/ensure-built.js')], {
    cwd: h.ROOT,
    stdio: 'inherit',
  });

  const benchId = `hearth_bench_${randomBytes(4).toString('hex')}`;
  const adminKey = `hth_bench_${randomBytes(24).toString('hex')}`;
  const started = Date.now();
  h.line(
    `bench ${benchId}: node ${process.version}, ${require('node:os').cpus().length} cores, fd limit ${h.currentFdLimit()}`,
  );

  let database = null;
  let handle = null;
  const outcomes = [];
  const cleanup = async () => {
    await h.stopAllChildren();
    if (handle) await handle.close().catch(() => undefined);
    if (database && !process.env.BENCH_KEEP_DB)
      await database.drop().catch((e) => h.line(`could not drop ${database.name}: ${e.message}`));
  };
  const onSignal = (signal) => {
    h.line(`bench interrupted (${signal}); cleaning up`);
    cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    database = await h.createBenchDatabase();
    const { openDatabase } = require('./lib/dist').persistence();
    handle = await openDatabase({ url: database.url, poolSize: 4, applicationName: 'bench-fixture' });
    const api = await h.startApi({ databaseUrl: database.url, adminKey, benchId });
    const ctx = {
      benchId,
      adminKey,
      database,
      db: handle.db,
      api,
      NotMeasured,
      rounds: int('BENCH_ROUNDS', 5, 9),
      seconds: {
        p1: int('BENCH_P1_SECONDS', 10, 120),
        p2: int('BENCH_P2_SECONDS', 6, 120),
        p3: int('BENCH_P3_SECONDS', 15, 120),
      },
    };
    for (const scenario of selected) {
      const t0 = Date.now();
      try {
        const outcome = await scenario.run(ctx);
        outcomes.push({ id: scenario.id, status: outcome.pass ? 'PASS' : 'FAIL' });
      } catch (error) {
        if (error instanceof NotMeasured) {
          h.line(`${scenario.id} not measured: ${error.message}`);
          h.writeResult(scenario.id, { measured: false, reason: error.message });
          outcomes.push({ id: scenario.id, status: 'NOT MEASURED' });
        } else {
          h.line(`${scenario.id} error: ${error && error.stack ? error.stack : error}`);
          outcomes.push({ id: scenario.id, status: 'ERROR' });
        }
      }
      h.line(`${scenario.id} took ${Math.round((Date.now() - t0) / 1000)}s`);
    }
  } finally {
    await cleanup();
  }
  h.line(
    `bench done in ${Math.round((Date.now() - started) / 1000)}s: ${outcomes.map((o) => `${o.id} ${o.status}`).join(', ')}`,
  );
  // Ratios are the signal; a FAIL is reported, not turned into a non-zero exit (noisy shared machines).
  if (outcomes.some((o) => o.status === 'ERROR')) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error && error.stack ? error.stack : error}\n`);
  process.exitCode = 1;
});
