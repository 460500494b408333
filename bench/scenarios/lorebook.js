'use strict';
// bench/lorebook (issue 4 "Benchmark"): the lorebook scan alone. Hearth's `activateLorebooks` (built
// domain lib in dist/) against a naive reference written here the way SillyTavern 1.18 does it (every
// entry, every key, a fresh RegExp or lower-cased `includes` per key and message, the scan text rebuilt
// per entry, the whole new content re-counted per entry). 2,000 entries, 10 % `/regex/` keys, scan depth
// 10, recursion on with 3 steps, ST's shipped matching (whole words, case-insensitive, names included).
// Both sides must activate the same entries; p50/p99 over 200 alternating runs after warm-up.
// Also runs standalone: `node bench/scenarios/lorebook.js` (after `npm run build`).
const { join } = require('node:path');
const h = require('../lib/harness');

const GOAL = 5;
const ENTRIES = 2000;
const REGEX_SHARE = 0.1;
const SCAN_DEPTH = 10;
const MAX_STEPS = 3;
const WARMUP = 20;
const RUNS = 200;
const MAX_PROMPT_TOKENS = 32_000;

/** The built domain lib; BENCH_DOMAIN_SRC points elsewhere (e.g. a tsc output of libs/domain/src). */
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

// ---- fixture: deterministic pseudo-words, books and chat ------------------------------------------

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
  const random = rng(42);
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
  const messages = Array.from({ length: 40 }, (_, i) => ({
    name: i % 2 ? 'Seraphina' : 'User',
    text: `${sentence(90, 0.004)}.`,
  }));
  return { world: { entries }, messages };
}

// ---- naive reference: SillyTavern's loop, literally ------------------------------------------------

function naiveScan(world, messages, countTokens) {
  const escapeRegex = (s) => s.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
  const parseRegexFromString = (input) => {
    const match = input.match(/^\/([\w\W]+?)\/([gimsuy]*)$/);
    if (!match) return null;
    let [, pattern, flags] = match;
    if (pattern.match(/(^|[^\\])\//)) return null;
    pattern = pattern.replace('\\/', '/');
    try {
      return new RegExp(pattern, flags);
    } catch {
      return null;
    }
  };
  const chat = messages.map((m) => `${m.name}: ${m.text}`).reverse();
  const depthBuffer = chat.slice(0, 1000).map((m) => m.trim());
  const recurseBuffer = [];
  const get = (recursion) => {
    let result = '\x01' + depthBuffer.slice(0, SCAN_DEPTH).join('\n\x01');
    if (recursion && recurseBuffer.length) result += '\n\x01' + recurseBuffer.join('\n\x01');
    return result;
  };
  const matchKeys = (haystack, needle) => {
    const keyRegex = parseRegexFromString(needle);
    if (keyRegex) return keyRegex.test(haystack);
    haystack = haystack.toLowerCase();
    const transformed = needle.toLowerCase();
    if (transformed.split(/\s+/).length > 1) return haystack.includes(transformed);
    return new RegExp(`(?:^|\\W)(${escapeRegex(transformed)})(?:$|\\W)`).test(haystack);
  };
  const sorted = Object.keys(world.entries)
    .map((k) => ({ ...world.entries[k] }))
    .sort((a, b) => b.order - a.order);
  const budget = Math.round((25 * MAX_PROMPT_TOKENS) / 100) || 1;
  const activated = new Map();
  let allActivatedText = '';
  let overflow = false;
  let state = 1;
  let count = 0;
  while (state) {
    if (MAX_STEPS && MAX_STEPS <= count) break;
    count++;
    let next = 0;
    const now = [];
    for (const entry of sorted) {
      if (activated.has(entry.uid) || entry.disable) continue;
      if (entry.constant) {
        now.push(entry);
        continue;
      }
      if (!entry.key.length) continue;
      const text = get(state === 2);
      const primary = entry.key.find((key) => key && matchKeys(text, key.trim()));
      if (!primary) continue;
      now.push(entry);
    }
    const textTokens = countTokens(allActivatedText);
    let newContent = '';
    for (const entry of now) {
      if (overflow) continue;
      newContent += `${entry.content}\n`;
      if (textTokens + countTokens(newContent) >= budget) {
        overflow = true;
        continue;
      }
      activated.set(entry.uid, entry);
    }
    const forRecursion = now;
    if (!overflow && forRecursion.length) next = 2;
    state = next;
    if (state) {
      const text = forRecursion.map((e) => e.content).join('\n');
      recurseBuffer.push(text);
      allActivatedText = `${text}\n${allActivatedText}`;
    }
  }
  return [...activated.keys()];
}

// ---- measurement ----------------------------------------------------------------------------------

function timeOnce(fn) {
  const t0 = performance.now();
  const result = fn();
  return { ms: performance.now() - t0, result };
}

async function run() {
  const engine = load('prompt/lorebook/index.js');
  const { parseWorldbook } = load('formats/worldbook.js');
  const { countTokens } = require('gpt-tokenizer/encoding/o200k_base');
  const { world, messages } = fixture();
  const book = { id: 'bench', name: 'bench', source: 'character', entries: parseWorldbook(world).entries };
  const settings = {
    ...engine.DEFAULT_LOREBOOK_SETTINGS,
    scanDepth: SCAN_DEPTH,
    recursive: true,
    maxRecursionSteps: MAX_STEPS,
  };
  const hearth = () =>
    engine
      .activateLorebooks({
        books: [book],
        messages,
        maxPromptTokens: MAX_PROMPT_TOKENS,
        seed: 'bench',
        settings,
      })
      .activated.map((a) => a.uid);
  const naive = () => naiveScan(world, messages, countTokens);

  const a = hearth();
  const b = naive();
  const same = JSON.stringify([...a].sort((x, y) => x - y)) === JSON.stringify([...b].sort((x, y) => x - y));
  for (let i = 0; i < WARMUP; i++) {
    hearth();
    naive();
  }
  const hearthMs = [];
  const naiveMs = [];
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      hearthMs.push(timeOnce(hearth).ms);
      naiveMs.push(timeOnce(naive).ms);
    } else {
      naiveMs.push(timeOnce(naive).ms);
      hearthMs.push(timeOnce(hearth).ms);
    }
  }
  const hs = h.summarize(hearthMs);
  const ns = h.summarize(naiveMs);
  const ratio = h.round(ns.p50 / hs.p50);
  const pass = same && ratio >= GOAL;
  h.line(
    `LOREBOOK scan of ${ENTRIES} entries (${a.length} activated, same as naive: ${same}): ` +
      `hearth p50 ${hs.p50} ms p99 ${hs.p99} ms; naive p50 ${ns.p50} ms p99 ${ns.p99} ms; ` +
      `ratio ${ratio}x (goal >= ${GOAL}x) ${h.verdict(pass)}`,
  );
  h.writeResult('LOREBOOK', {
    measured: true,
    entries: ENTRIES,
    regexShare: REGEX_SHARE,
    scanDepth: SCAN_DEPTH,
    maxRecursionSteps: MAX_STEPS,
    activated: a.length,
    sameActivation: same,
    hearth: hs,
    naive: ns,
    ratio,
    goal: GOAL,
    pass,
  });
  return { pass };
}

module.exports = { id: 'LOREBOOK', run };

if (require.main === module) {
  run().catch((error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exitCode = 1;
  });
}
