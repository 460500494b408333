'use strict';
// P5 (issue 5 benchmark): `POST /sessions/:id/respond/dry-run` on a 5,000-message session (2,500 turns
// after the greeting, token counts stored per message as real turns store them) bound to a 2,000-entry
// lorebook (10 % `/regex/` keys, recursion on as ST ships it), a character and the ST Default preset
// opened to a 32k context. Figures: the route's p50/p99 over RUNS sequential requests after warm-up
// (goal p50 < 40 ms), and the ratio of that p50 to `buildPrompt` alone (built domain lib) on the same
// engine input in memory, loaded once through the built `loadTurnContext` (goal ≤ 2x); the two are
// measured in alternation, one request then one engine call.
// The session, book, preset and card go through the API; the 5,000 messages are written with SQL (the
// same rows `appendUserFloor`/`commitFloor` write, in bulk).
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const h = require('../lib/harness');

const GOAL_P50_MS = 40;
const GOAL_RATIO = 2;
const TURNS = 2_500;
const ENTRIES = 2_000;
const REGEX_SHARE = 0.1;
const WARMUP = 10;
const RUNS = Number(process.env.BENCH_P5_RUNS ?? 100);
const GOLDEN = join(
  h.ROOT,
  'libs/domain/src/prompt/__fixtures__/golden-example/a-default-seraphina-first-message',
);

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  'then',
  'dor',
  'vel',
  'sha',
  'qu',
  'nim',
  'zar',
  'eth',
  'ul',
  'bri',
  'og',
];
const FILLER =
  'the a of and to in is was that with for as on at by from but not or this his her they we you'.split(' ');

function fixture() {
  const random = rng(5);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const word = () => pick(SYLLABLES) + pick(SYLLABLES) + pick(SYLLABLES);
  const vocabulary = Array.from({ length: 3000 }, word);
  const sentence = (n, keywordChance) =>
    Array.from({ length: n }, () => (random() < keywordChance ? pick(vocabulary) : pick(FILLER))).join(' ');
  const entries = {};
  for (let uid = 0; uid < ENTRIES; uid++) {
    const keys = Array.from({ length: 2 + Math.floor(random() * 3) }, () => pick(vocabulary));
    if (random() < REGEX_SHARE) keys[0] = `/\\b${keys[0].slice(0, 4)}[a-z]*${keys[0].slice(-2)}\\b/i`;
    entries[uid] = {
      uid,
      key: keys,
      keysecondary: [],
      comment: `entry ${uid}`,
      content: `${sentence(30, 0.01)}.`,
      constant: false,
      selective: true,
      order: Math.floor(random() * 200),
      position: Math.floor(random() * 2),
      disable: false,
    };
  }
  const turns = Array.from({ length: TURNS }, () => ({
    user: `${sentence(25, 0.004)}.`,
    reply: `${sentence(60, 0.004)}.`,
  }));
  return { world: { entries }, turns, message: `${sentence(20, 0.05)}?` };
}

async function call(ctx, method, path, body) {
  const res = await fetch(`${ctx.api.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ctx.adminKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function expect201(ctx, path, body) {
  const res = await call(ctx, 'POST', path, body);
  if (res.status !== 201)
    throw new Error(`P5 ${path}: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  return res.json.data;
}

/** 2,500 committed turns after the greeting floor, on its line, with stored token counts; moves the head. */
async function seedHistory(ctx, sessionId, turns) {
  const dist = require('../lib/dist');
  const { newId } = dist.domain();
  const counter = require(join(h.DIST_API, 'libs/domain/src/prompt/shared/token-counter.js')).tokenCounter(
    'o200k_base',
  );
  const db = ctx.db;
  const branch = await db
    .selectFrom('branches')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('name', '=', 'main')
    .executeTakeFirstOrThrow();
  const greeting = await db
    .selectFrom('floors')
    .selectAll()
    .where('id', '=', branch.head_floor_id)
    .executeTakeFirstOrThrow();
  const now = Date.now();
  let parent = greeting.id;
  const base = { account_id: branch.account_id, session_id: sessionId };
  for (let start = 0; start < turns.length; start += 250) {
    const floors = [];
    const pages = [];
    const messages = [];
    turns.slice(start, start + 250).forEach((turn, k) => {
      const floorNo = greeting.floor_no + 1 + start + k;
      const floorId = newId('flr');
      floors.push({
        ...base,
        id: floorId,
        branch_id: branch.id,
        floor_no: floorNo,
        parent_floor_id: parent,
        line_id: greeting.line_id,
        state: 'committed',
        token_in: 0,
        token_out: 0,
        reasoning_text: null,
        metadata: JSON.stringify({}),
        superseded_at: null,
        superseded_by_floor_id: null,
        state_snapshot: null,
        created_at: now,
        updated_at: now,
      });
      parent = floorId;
      for (const [kind, role, content] of [
        ['input', 'user', turn.user],
        ['output', 'assistant', turn.reply],
      ]) {
        const pageId = newId('pg');
        pages.push({
          ...base,
          id: pageId,
          floor_id: floorId,
          page_no: kind === 'input' ? 0 : 1,
          page_kind: kind,
          is_active: true,
          version: 1,
          checksum: null,
          created_at: now,
          updated_at: now,
        });
        messages.push({
          ...base,
          id: newId('msg'),
          floor_id: floorId,
          page_id: pageId,
          seq: 0,
          role,
          content,
          content_format: 'text',
          is_hidden: false,
          source: role === 'user' ? 'user' : 'model',
          token_count: counter.count(content),
          token_encoding: 'o200k_base',
          created_at: now,
        });
      }
    });
    // One transaction, as a turn's commit writes its floor with its pages and messages: the history
    // revision triggers then count none of them as an edit of a committed floor (a chat that only grows
    // keeps its revision, docs/decisions.md "Turn history cache").
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('floors').values(floors).execute();
      await tx.insertInto('pages').values(pages).execute();
      await tx.insertInto('messages').values(messages).execute();
    });
  }
  await db
    .updateTable('branches')
    .set({ head_floor_id: parent, updated_at: now })
    .where('id', '=', branch.id)
    .execute();
  // What autovacuum does after a bulk load; without it the planner estimates one row per table.
  const { sql } = require('kysely');
  await sql`ANALYZE floors, pages, messages, worldbook_entries`.execute(db);
  return branch;
}

async function run(ctx) {
  const data = fixture();
  const card = JSON.parse(
    readFileSync(join(GOLDEN, 'inputs/card/Seraphina.ccv3.chara_card_v3.json'), 'utf8'),
  );
  delete card.data.character_book;
  card.data.extensions = { ...card.data.extensions, world: '' };
  const preset = JSON.parse(
    readFileSync(join(GOLDEN, 'inputs/preset/openai_Default.st-1.18.0.json'), 'utf8'),
  );
  preset.openai_max_context = 32_768;
  preset.openai_max_tokens = 1_000;

  const character = await expect201(ctx, '/import/character', { payload: card, create_session: false });
  const presetRow = await expect201(ctx, '/import/preset', { name: `P5 ${ctx.benchId}`, data: preset });
  const book = await expect201(ctx, '/import/worldbook', {
    name: `P5 book ${ctx.benchId}`,
    data: data.world,
  });
  const session = await expect201(ctx, '/sessions', {
    title: 'P5 dry-run',
    character_id: character.character_id,
    preset_id: presetRow.id,
    worldbook_ids: [book.id],
  });
  await seedHistory(ctx, session.id, data.turns);

  // The same engine input, loaded once through the built loader, for the engine alone in memory.
  require('reflect-metadata');
  const { loadTurnContext } = require(join(h.DIST_API, 'libs/app/src/turns/turn-context.js'));
  const { buildPrompt } = require(join(h.DIST_API, 'libs/domain/src/prompt/engine/index.js'));
  const { account } = await require('../lib/seed').defaultAccount(ctx.db);
  const client = await ctx.db
    .selectFrom('clients')
    .selectAll()
    .where('account_id', '=', account.id)
    .where('is_default', '=', true)
    .executeTakeFirstOrThrow();
  const actor = {
    kind: 'account',
    accountId: account.id,
    accountRole: 'admin',
    clientId: client.id,
    clientIsDefault: true,
  };
  const turn = await loadTurnContext(ctx.db, actor, {
    sessionId: session.id,
    intent: 'normal',
    userInput: data.message,
    access: 'read',
    dryRun: true,
    debug: { include_worldbook_matches: false },
  });

  // Route and engine alone alternate, request by request (the harness's A/B rule), so both see the
  // same machine: a background task (autovacuum after the seeding, another process) slows both.
  const body = { message: data.message };
  const times = [];
  const engineTimes = [];
  let last = null;
  let engineResult = null;
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // Timed until the whole response has arrived; parsing it is the client's business, as the
    // engine-alone side does not parse anything either.
    const t0 = h.nowMs();
    const raw = await fetch(`${ctx.api.baseUrl}/sessions/${session.id}/respond/dry-run`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await raw.text();
    const ms = h.nowMs() - t0;
    const res = { status: raw.status, json: JSON.parse(text) };
    if (res.status !== 200)
      throw new Error(`P5 dry-run: HTTP ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
    if (i >= WARMUP) times.push(ms);
    last = res.json.data;

    const e0 = h.nowMs();
    engineResult = buildPrompt(turn.engineInput);
    if (i >= WARMUP) engineTimes.push(h.nowMs() - e0);
  }
  const route = h.summarize(times);
  const engine = h.summarize(engineTimes);
  // Information: the engine alone in a tight loop (hot caches, nothing in between).
  const tightTimes = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = h.nowMs();
    buildPrompt(turn.engineInput);
    if (i >= WARMUP) tightTimes.push(h.nowMs() - t0);
  }
  const tight = h.summarize(tightTimes);
  if (engineResult.prompt_snapshot.prompt_digest !== last.prompt_snapshot.prompt_digest)
    throw new Error('P5: the route and the engine in memory assembled different prompts');

  // Where the rest goes (information): loading the turn from Postgres, and the response's JSON.
  const loadTimes = [];
  const jsonTimes = [];
  for (let i = 0; i < 20; i++) {
    let t0 = h.nowMs();
    await loadTurnContext(ctx.db, actor, {
      sessionId: session.id,
      intent: 'normal',
      userInput: data.message,
      access: 'read',
      dryRun: true,
    });
    loadTimes.push(h.nowMs() - t0);
    t0 = h.nowMs();
    JSON.stringify({ data: last });
    jsonTimes.push(h.nowMs() - t0);
  }
  // BENCH_P5_PROBE=1: the three biggest reads of a turn, timed alone.
  if (process.env.BENCH_P5_PROBE) {
    const vv = require(join(h.DIST_API, 'libs/app/src/variables/variable-views.js'));
    const branch = await ctx.db
      .selectFrom('branches')
      .selectAll()
      .where('session_id', '=', session.id)
      .executeTakeFirstOrThrow();
    for (const [label, fn] of [
      [
        'history',
        async () => {
          const { transcriptRepository, turnHistoryRepository } = require('../lib/dist').persistence();
          const head = await ctx.db
            .selectFrom('floors')
            .selectAll()
            .where('id', '=', branch.head_floor_id)
            .executeTakeFirstOrThrow();
          return turnHistoryRepository.activeMessages(
            ctx.db,
            await transcriptRepository.lineageRanges(ctx.db, head),
          );
        },
      ],
      [
        'variables',
        () =>
          vv.loadVariableViews(ctx.db, account.id, {
            sessionId: session.id,
            branchId: branch.id,
            floorId: branch.head_floor_id,
          }),
      ],
      [
        'entries',
        () =>
          ctx.db.selectFrom('worldbook_entries').selectAll().where('worldbook_id', '=', book.id).execute(),
      ],
    ]) {
      const ts = [];
      for (let i = 0; i < 10; i++) {
        const t0 = h.nowMs();
        await fn();
        ts.push(h.nowMs() - t0);
      }
      h.line(`P5 probe ${label}: p50 ${h.summarize(ts).p50} ms`);
    }
  }
  // The whole use case in this process (load + engine + view), without HTTP, auth and the API's own load.
  const { toDryRunResult } = require(join(h.DIST_API, 'libs/app/src/turns/dry-run-result.js'));
  const wholeTimes = [];
  for (let i = 0; i < 20; i++) {
    const t0 = h.nowMs();
    const c = await loadTurnContext(ctx.db, actor, {
      sessionId: session.id,
      intent: 'normal',
      userInput: data.message,
      access: 'read',
      dryRun: true,
    });
    JSON.stringify(
      toDryRunResult(buildPrompt(c.engineInput), { includeWorldbookMatches: false, warnings: c.warnings }),
    );
    wholeTimes.push(h.nowMs() - t0);
  }
  h.line(`P5 info: load + engine + view in process p50 ${h.summarize(wholeTimes).p50} ms`);
  const load = h.summarize(loadTimes);
  const json = h.summarize(jsonTimes);
  h.line(
    `P5 info: loadTurnContext p50 ${load.p50} ms, response JSON.stringify p50 ${json.p50} ms (${Math.round(JSON.stringify({ data: last }).length / 1024)} KiB)`,
  );

  const ratio = h.round(route.p50 / engine.p50);
  const activated = last.prompt_snapshot.worldbook_activated_entry_uids.length;
  const pass = route.p50 < GOAL_P50_MS && ratio <= GOAL_RATIO;
  h.line(
    `P5 dry-run (${TURNS * 2} messages, ${ENTRIES} entries, ${activated} activated, ${last.messages.length} prompt messages, ~${last.token_estimate} tokens): ` +
      `route p50 ${route.p50} ms p99 ${route.p99} ms (goal p50 < ${GOAL_P50_MS}); buildPrompt alone p50 ${engine.p50} ms p99 ${engine.p99} ms; ` +
      `ratio ${ratio}x (goal ≤ ${GOAL_RATIO}x) ${pass ? 'PASS' : 'FAIL'}`,
  );
  h.line(
    `P5 info: buildPrompt alone in a tight loop p50 ${tight.p50} ms; route p50 / that = ${h.round(route.p50 / tight.p50)}x`,
  );
  h.writeResult('P5', {
    route,
    engine,
    engineTightLoop: tight,
    ratio,
    activated,
    prompt_messages: last.messages.length,
    token_estimate: last.token_estimate,
    pass,
  });
  return { pass };
}

module.exports = { id: 'P5', run };
