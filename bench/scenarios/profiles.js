'use strict';
// PROFILES (issue 6 benchmark): a turn's model slot resolution (`ResolveModelForTurnUseCase.execute`,
// the built library, in this process) with 1,000 LLM profiles and 10,000 session bindings in the
// database, timed one call at a time:
//   cold:   the resolver's cache (resolved slots and read keys) cleared before every call, so each
//           call runs the one cold statement, decrypts the keys and picks the layer;
//   cached: a working set of sessions resolved once, then each call checks the session and the
//           account's resolution version in one statement.
// Goal: p50 < 1 ms for both. Baseline (same pool, same run): a bare single `SELECT` of one row by
// primary key, as a prepared statement like the resolver's. Every answer is checked (the session's
// own binding must win), so a fast wrong answer cannot pass.
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');
const { sql, CompiledQuery } = require('kysely');
const h = require('../lib/harness');
const seed = require('../lib/seed');
const dist = require('../lib/dist');

const PROFILES = 1_000;
const SESSIONS = 10_000; // one session binding each
const PROJECTS = 20;
const CALLS = 3_000; // per mode per round
const CACHED_WORKING_SET = 500;
const GOAL_P50_MS = 1;

const distLib = (path) => require(join(h.DIST_API, 'libs', path));

async function fixture(db, box) {
  const owner = await seed.defaultAccount(db);
  const { account, workspace } = owner;
  const projects = await seed.createProjects(db, owner, PROJECTS, 'bench profiles');
  const now = Date.now();
  const profiles = Array.from({ length: PROFILES }, (_, i) => {
    const apiKey = `sk-bench-${randomBytes(16).toString('hex')}`;
    return {
      id: `llmp_bench${String(i).padStart(6, '0')}`,
      account_id: account.id,
      workspace_id: workspace.id,
      preset_name: `bench profile ${i}`,
      provider: 'openai',
      model_id: `bench-model-${i}`,
      base_url: 'https://llm.example.com/v1',
      api_key_name: null,
      api_key_ciphertext: box.encrypt(apiKey),
      api_key_masked: `sk-...${apiKey.slice(-4)}`,
      status: 'active',
      last_used_at: null,
      deleted_at: null,
      created_at: now,
      updated_at: now,
    };
  });
  for (let i = 0; i < profiles.length; i += 250)
    await db
      .insertInto('llm_profiles')
      .values(profiles.slice(i, i + 250))
      .execute();
  const projectIds = projects.map((p) => p.id);
  // Sessions spread over the Projects; each has one binding (narrator or `*`, alternating) to a profile.
  await sql`
    INSERT INTO sessions (id, account_id, workspace_id, project_id, title, status, created_at, updated_at)
    SELECT 'ses_bench' || lpad(g::text, 6, '0'), ${account.id}, ${workspace.id},
      (${sql.val(projectIds)}::text[])[1 + g % ${PROJECTS}], 'bench session ' || g, 'active', ${now}::bigint, ${now}::bigint
    FROM generate_series(0, ${SESSIONS - 1}) AS g`.execute(db);
  await sql`
    INSERT INTO llm_profile_bindings
      (id, account_id, scope, scope_id, session_id, instance_slot, profile_id, params, created_at, updated_at)
    SELECT 'llmb_bench' || lpad(g::text, 6, '0'), ${account.id}, 'session', 'ses_bench' || lpad(g::text, 6, '0'),
      'ses_bench' || lpad(g::text, 6, '0'), CASE WHEN g % 2 = 0 THEN 'narrator' ELSE '*' END,
      'llmp_bench' || lpad((g % ${PROFILES})::text, 6, '0'), '{"temperature": 0.7, "top_p": null}'::jsonb,
      ${now}::bigint, ${now}::bigint
    FROM generate_series(0, ${SESSIONS - 1}) AS g`.execute(db);
  // Global bindings for every slot, and a Project override on half the Projects (both lose to the
  // session's own binding, but the statement reads them).
  await sql`
    INSERT INTO llm_profile_bindings
      (id, account_id, scope, scope_id, session_id, instance_slot, profile_id, params, created_at, updated_at)
    SELECT 'llmb_benchg_' || slot, ${account.id}, 'global', 'global', NULL, slot, 'llmp_bench000000', NULL,
      ${now}::bigint, ${now}::bigint
    FROM unnest(ARRAY['*', 'narrator', 'director', 'verifier', 'memory']) AS slot`.execute(db);
  await sql`
    INSERT INTO project_llm_profile_overrides
      (id, workspace_id, project_id, base_profile_id, override_json, status, created_at, updated_at)
    SELECT 'plo_bench' || i, ${workspace.id}, (${sql.val(projectIds)}::text[])[i], 'llmp_bench000001',
      '{"model_id": "bench-override"}'::jsonb, 'active', ${now}::bigint, ${now}::bigint
    FROM generate_series(1, ${PROJECTS}, 2) AS i`.execute(db);
  await sql`ANALYZE llm_profiles`.execute(db);
  await sql`ANALYZE llm_profile_bindings`.execute(db);
  await sql`ANALYZE sessions`.execute(db);
  const expected = (n) => `llmp_bench${String(n % PROFILES).padStart(6, '0')}`;
  return { account, sessionId: (n) => `ses_bench${String(n).padStart(6, '0')}`, expected };
}

/** Times `calls` sequential calls of `fn(i)`; latencies in ms. */
async function timeCalls(calls, fn) {
  const latencies = new Array(calls);
  const t0 = h.nowMs();
  for (let i = 0; i < calls; i++) {
    const s = performance.now();
    await fn(i);
    latencies[i] = performance.now() - s;
  }
  const ms = h.nowMs() - t0;
  const { p50, p99 } = h.summarize(latencies);
  return { calls, p50, p99, opsPerSecond: h.round((calls / ms) * 1000, 0) };
}

async function run(ctx) {
  const { SecretBox } = dist.platform();
  const { ResolveModelForTurnUseCase } = distLib('app/src/llm-profiles/resolve-model-for-turn.use-case.js');
  const { preparedStatement } = distLib('persistence/src/prepared-statements.js');
  const box = new SecretBox(randomBytes(32));
  const config = { llm: { provider: 'openai', model: 'gpt-env', baseUrl: null, apiKey: null } };
  const resolver = new ResolveModelForTurnUseCase(ctx.db, config, box);

  const t0 = Date.now();
  const f = await fixture(ctx.db, box);
  h.line(
    `PROFILES fixture: ${PROFILES} profiles, ${SESSIONS} session bindings, 5 global bindings, ${PROJECTS / 2} Project overrides (${Math.round((Date.now() - t0) / 1000)}s)`,
  );
  const actor = {
    kind: 'account',
    accountId: f.account.id,
    accountRole: 'admin',
    clientId: 'cli_bench',
    clientIsDefault: true,
  };
  let checked = 0;
  const resolveAndCheck = async (n) => {
    const r = await resolver.execute(actor, f.sessionId(n), 'narrator', {
      temperature: 1,
      max_output_tokens: 64,
    });
    if (r.status !== 'ready' || r.source !== 'session_profile' || r.profile_id !== f.expected(n))
      throw new Error(
        `PROFILES: session ${n} resolved to ${r.source}/${r.profile_id}, expected ${f.expected(n)}`,
      );
    if (!r.target.apiKey || r.params.temperature !== 0.7 || r.params.max_output_tokens !== 64)
      throw new Error(`PROFILES: session ${n} resolved without its key or params`);
    checked++;
  };
  // Sessions are visited in a scrambled order (a multiplier coprime with SESSIONS).
  const cold = (round) => (i) => {
    resolver.cache.clear();
    return resolveAndCheck((i * 7919 + round * 104_729) % SESSIONS);
  };
  const cached = (i) => resolveAndCheck((i * 7919) % CACHED_WORKING_SET);
  const bareSql = preparedStatement('SELECT id, model_id FROM llm_profiles WHERE id = $1');
  const bare = async (i) => {
    const id = f.expected(i * 7919);
    const result = await ctx.db.executeQuery(CompiledQuery.raw(bareSql, [id]));
    if (result.rows.length !== 1) throw new Error(`PROFILES baseline: ${id} not found`);
  };

  // Warm-up (JIT, prepared statements on every pooled connection), then alternating rounds.
  for (let i = 0; i < CACHED_WORKING_SET; i++) await resolveAndCheck((i * 7919) % CACHED_WORKING_SET);
  await timeCalls(500, cold(99));
  await timeCalls(500, cached);
  await timeCalls(500, bare);
  const rounds = [];
  for (let r = 0; r < ctx.rounds; r++) {
    const baseline = await timeCalls(CALLS, bare);
    const coldRound = await timeCalls(CALLS, cold(r));
    const cachedRound = await timeCalls(CALLS, cached);
    rounds.push({ baseline, cold: coldRound, cached: cachedRound });
  }
  const med = (side, key) => h.round(h.median(rounds.map((r) => r[side][key])), 3);
  const summary = (side) => ({
    p50: med(side, 'p50'),
    p99: med(side, 'p99'),
    opsPerSecond: med(side, 'opsPerSecond'),
  });
  const baseline = summary('baseline');
  const coldSummary = summary('cold');
  const cachedSummary = summary('cached');
  const ratio = (s) => h.round(s.p50 / baseline.p50, 2);
  const pass = coldSummary.p50 < GOAL_P50_MS && cachedSummary.p50 < GOAL_P50_MS;
  for (const [label, s] of [
    ['cold (cache cleared each call)', coldSummary],
    ['cached', cachedSummary],
  ])
    h.line(
      `PROFILES resolve narrator ${label}  p50=${s.p50}ms p99=${s.p99}ms ops/s=${s.opsPerSecond} p50 ratio to bare SELECT=${ratio(s)}x goal p50<${GOAL_P50_MS}ms ${h.verdict(s.p50 < GOAL_P50_MS)}`,
    );
  h.line(
    `PROFILES baseline bare SELECT of one row by primary key (same pool)  p50=${baseline.p50}ms p99=${baseline.p99}ms ops/s=${baseline.opsPerSecond}`,
  );
  h.line(`PROFILES answers checked: ${checked}, each the session's own binding with its key and params`);
  const file = h.writeResult('PROFILES', {
    goal: { p50Ms: GOAL_P50_MS },
    fixture: { profiles: PROFILES, sessionBindings: SESSIONS, globalBindings: 5, overrides: PROJECTS / 2 },
    cold: { ...coldSummary, p50RatioToBare: ratio(coldSummary) },
    cached: { ...cachedSummary, p50RatioToBare: ratio(cachedSummary) },
    baseline,
    checked,
    pass,
    rounds,
  });
  return { pass, file };
}

module.exports = { id: 'PROFILES', run };
