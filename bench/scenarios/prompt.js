'use strict';
// bench/prompt (issue 4 "Benchmark"): one whole prompt assembly through `buildPrompt` (built domain lib in
// dist/): a 5,000-message history with stored token counts, a 2,000-entry lorebook with 10 % `/regex/`
// keys and recursion on, a 40-prompt preset and a 32k-token budget. p50 and p99 over 200 runs after
// warm-up; goal p50 < 15 ms and p99 < 40 ms. The engine input is built once, as a turn would load it.
// Also runs standalone: `node bench/scenarios/prompt.js` (after `npm run build`).
const { join } = require('node:path');
const h = require('../lib/harness');

const GOAL_P50 = 15;
const GOAL_P99 = 40;
const MESSAGES = 5000;
const ENTRIES = 2000;
const REGEX_SHARE = 0.1;
const PROMPTS = 40;
const BUDGET = 32_000;
const WARMUP = 20;
const RUNS = 200;

const DOMAIN = process.env.BENCH_DOMAIN_SRC || join(h.DIST_API, 'libs/domain/src');

function load(path) {
  try {
    return require(join(DOMAIN, path));
  } catch (error) {
    throw new Error(`cannot load the built ${path} from ${DOMAIN} (run npm run build): ${error.message}`, {
      cause: error,
    });
  }
}

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

const WORDS = [
  'amber',
  'bridge',
  'cinder',
  'dusk',
  'ember',
  'fable',
  'grove',
  'harbor',
  'ivory',
  'jade',
  'kettle',
  'lantern',
  'meadow',
  'nectar',
  'orchard',
  'pebble',
  'quarry',
  'raven',
  'saffron',
  'thistle',
];

function fixture(normalizeWorldbookEntry, countTokens) {
  const random = rng(42);
  const word = () => WORDS[Math.floor(random() * WORDS.length)];
  const name = (i) => `${WORDS[i % WORDS.length]}${i}`;
  const entries = [];
  for (let uid = 0; uid < ENTRIES; uid++) {
    const regex = random() < REGEX_SHARE;
    const key = regex ? [`/${name(uid)}\\s+${word()}/i`] : [name(uid), `${word()} ${name(uid + 1)}`];
    entries.push(
      normalizeWorldbookEntry(
        {
          uid,
          key,
          keysecondary: [],
          content: `Lore ${uid}: the ${word()} of ${name(uid)} mentions ${name((uid * 7) % ENTRIES)}.`,
          comment: `entry ${uid}`,
          order: 100 + (uid % 50),
          position: uid % 5 === 0 ? 4 : uid % 2,
          depth: 4,
          constant: uid % 400 === 0,
          selective: true,
          selectiveLogic: 0,
          disable: false,
          probability: 100,
          useProbability: true,
        },
        uid,
      ),
    );
  }
  const history = [];
  for (let i = 0; i < MESSAGES; i++) {
    const content = `Message ${i}: we walked past the ${word()} and the ${word()}; ${name((i * 13) % ENTRIES)} was there. ${'Some more words here. '.repeat(3)}`;
    history.push({
      floor_no: Math.floor(i / 2),
      role: i % 2 === 0 ? 'user' : 'assistant',
      name: i % 2 === 0 ? 'User' : 'Narrator Bot',
      content,
      token_count: countTokens(content),
    });
  }
  const prompts = [
    {
      identifier: 'main',
      role: 'system',
      content: "Write {{char}}'s next reply in a chat with {{user}}.",
      system_prompt: true,
    },
    { identifier: 'jailbreak', role: 'system', content: 'Stay in character.', system_prompt: true },
    { identifier: 'nsfw', role: 'system', content: '', system_prompt: true },
  ];
  const order = [
    { identifier: 'main', enabled: true },
    { identifier: 'worldInfoBefore', enabled: true },
    { identifier: 'charDescription', enabled: true },
    { identifier: 'charPersonality', enabled: true },
    { identifier: 'scenario', enabled: true },
    { identifier: 'worldInfoAfter', enabled: true },
    { identifier: 'dialogueExamples', enabled: true },
  ];
  for (let i = 0; order.length + 2 < PROMPTS; i++) {
    const identifier = `custom-${i}`;
    prompts.push({
      identifier,
      name: identifier,
      role: i % 3 === 0 ? 'user' : 'system',
      content: `Custom instruction ${i} for {{char}}: keep the ${word()} in mind.`,
      system_prompt: false,
      injection_position: i % 4 === 0 ? 1 : 0,
      injection_depth: i % 6,
    });
    order.push({ identifier, enabled: true });
  }
  order.push({ identifier: 'chatHistory', enabled: true }, { identifier: 'jailbreak', enabled: true });
  return {
    seed: 'bench',
    now: Date.UTC(2026, 10, 22),
    intent: 'normal',
    user: { name: 'User', description: 'A traveller.', in_prompt: true },
    character: {
      id: 'chr_bench',
      data: {
        name: 'Narrator Bot',
        description: 'A storyteller who knows every lore entry. '.repeat(10),
        personality: 'patient',
        scenario: 'A long journey.',
        mes_example: '<START>\n{{user}}: Tell me.\n{{char}}: Gladly.',
        first_mes: 'Welcome.',
      },
    },
    preset: {
      id: 'prs_bench',
      data: {
        prompts,
        prompt_order: [{ character_id: 100001, order }],
        openai_max_context: BUDGET,
        openai_max_tokens: 1000,
      },
    },
    lorebooks: [{ id: 'wb_bench', name: 'Bench lore', source: 'global', entries }],
    lorebook_settings: { scanDepth: 10, recursive: true, maxRecursionSteps: 3, budgetPercent: 25 },
    regex: null,
    history,
    user_input: `What about ${name(17)} and the ${word()}?`,
    next_floor_no: MESSAGES / 2,
    provider: { kind: 'openai', model_id: 'gpt-4o' },
  };
}

async function run() {
  const { buildPrompt } = load('prompt/engine/build-prompt');
  const { normalizeWorldbookEntry } = load('formats/worldbook');
  const { tokenCounter } = load('prompt/shared/token-counter');
  const counter = tokenCounter('o200k_base');
  const input = fixture(normalizeWorldbookEntry, (t) => counter.count(t));
  let last = null;
  for (let i = 0; i < WARMUP; i++) last = buildPrompt(input);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    last = buildPrompt(input);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const s = h.summarize(times);
  const pass = s.p50 < GOAL_P50 && s.p99 < GOAL_P99;
  h.line(
    `PROMPT buildPrompt over ${MESSAGES} messages, ${ENTRIES} entries (${REGEX_SHARE * 100}% regex, recursion on), ` +
      `${PROMPTS}-prompt preset, ${BUDGET} budget: ${last.messages.length} messages, ` +
      `${last.prompt_snapshot.worldbook_activated_entry_uids.length} entries activated, ` +
      `${last.runtime_trace.assembly.history.included} history messages kept; ` +
      `p50 ${s.p50} ms p99 ${s.p99} ms (goal p50 < ${GOAL_P50}, p99 < ${GOAL_P99}) ${h.verdict(pass)}`,
  );
  h.writeResult('PROMPT', { runs: RUNS, ...s, messages: last.messages.length, pass });
  return { pass };
}

module.exports = { id: 'PROMPT', run };

if (require.main === module) {
  run().catch((error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exitCode = 1;
  });
}
