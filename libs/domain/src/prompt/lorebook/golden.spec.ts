import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorldbook, type NormalizedWorldbook } from '../../formats/worldbook';
import { tokenCounter } from '../shared/token-counter';
import { activateLorebooks } from './activate';
import type { LorebookActivationInput } from './types';

/**
 * Golden tests on real files: the Eldoria book ST ships (1.18.0 and 1.12.6 files) with scripted chats, and
 * the lorebook part of the prompt SillyTavern 1.18.0 itself assembled (golden-example, "World Info (before)").
 */

const FORMATS = join(__dirname, '../../formats/__fixtures__/worldbooks');
const GOLDEN = join(__dirname, '../__fixtures__/golden-example/a-default-seraphina-first-message');
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

const eldoria = (file: string): NormalizedWorldbook => parseWorldbook(readJson(join(FORMATS, file)));
const stMacros = (text: string) =>
  text.replace(/\{\{user\}\}/gi, 'User').replace(/\{\{char\}\}/gi, 'Seraphina');

describe('golden: SillyTavern 1.18.0 world info (before) of golden-example a', () => {
  const settingsFile = readJson(join(GOLDEN, 'inputs/settings.json'));
  const wi = settingsFile.world_info;
  const cc = settingsFile.chat_completion;
  const request = readJson(join(GOLDEN, 'request.json'));
  const history = readFileSync(join(GOLDEN, 'inputs/history.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line));
  const userMessage = readFileSync(join(GOLDEN, 'inputs/user_message.txt'), 'utf8');
  const book = parseWorldbook(readJson(join(GOLDEN, 'inputs/worldbooks/Eldoria.st-1.18.0.json')));

  const input = (encoding: 'o200k_base' | 'cl100k_base'): LorebookActivationInput => ({
    books: [{ id: 'eldoria', name: 'Eldoria', source: 'character', entries: book.entries }],
    messages: [
      ...history.map((m: { name: string; mes: string }) => ({ name: m.name, text: m.mes })),
      { name: settingsFile.persona.name, text: userMessage },
    ],
    maxPromptTokens: cc.openai_max_context - cc.openai_max_tokens,
    settings: {
      scanDepth: wi.world_info_depth,
      minActivations: wi.world_info_min_activations,
      minActivationsDepthMax: wi.world_info_min_activations_depth_max,
      budgetPercent: wi.world_info_budget,
      budgetCap: wi.world_info_budget_cap,
      includeNames: wi.world_info_include_names,
      recursive: wi.world_info_recursive,
      maxRecursionSteps: wi.world_info_max_recursion_steps,
      caseSensitive: wi.world_info_case_sensitive,
      matchWholeWords: wi.world_info_match_whole_words,
      useGroupScoring: wi.world_info_use_group_scoring,
      characterStrategy: 'character_first',
    },
    seed: 'golden',
    substitute: stMacros,
    tokenCounter: tokenCounter(encoding),
  });

  it.each(['o200k_base', 'cl100k_base'] as const)(
    '%s: the block equals the captured prompt byte for byte',
    (encoding) => {
      const r = activateLorebooks(input(encoding));
      // The second system message of the captured request is the "World Info (before)" block (wi_format {0}).
      expect(r.placement.before.content).toBe(request.messages[1].content);
      // forest/beasts/magic in the greeting fire 0, 1, 3 (all order 100): placed in reverse activation order.
      expect(r.activatedEntryUids).toEqual({ eldoria: [0, 1, 3] });
      // The glade entry (reached by recursion through entry 0) does not fit the 949-token budget (§d.5).
      expect(r.budget).toEqual({ limit: 949, overflowed: true });
    },
  );
});

describe('golden: the Eldoria book with scripted chats (external-formats.md §d)', () => {
  const counter = tokenCounter('o200k_base');
  const contentOf = (book: NormalizedWorldbook, uid: number) =>
    stMacros(book.entries.find((e) => e.uid === uid)!.content);
  const scan = (book: NormalizedWorldbook, text: string, extra: Partial<LorebookActivationInput> = {}) =>
    activateLorebooks({
      books: [{ id: 'eldoria', name: 'Eldoria', source: 'character', entries: book.entries }],
      messages: [{ name: 'User', text }],
      maxPromptTokens: 32_000,
      seed: 'eldoria',
      substitute: stMacros,
      tokenCounter: counter,
      ...extra,
    });

  describe.each(['Eldoria.st-1.18.0.json', 'Eldoria.st-1.12.6.json'])('%s', (file) => {
    const book = eldoria(file);

    it('§d.6 shipped settings: "magic" fires power, whose text reaches the glade, which reaches the rest', () => {
      const r = scan(book, 'What magic do you have?');
      expect(r.activated.map((a) => [a.uid, a.recursionLevel])).toEqual([
        [3, 0],
        [2, 1],
        [0, 2],
        [1, 2],
      ]);
      // §d.7: equal orders are placed in reverse activation order.
      expect(r.placement.before.content).toBe([1, 0, 2, 3].map((uid) => contentOf(book, uid)).join('\n'));
    });

    it('§d.3 whole words (shipped): "powers" does not match the key "power"; off, it does', () => {
      expect(scan(book, 'Tell me about your powers.').activated).toEqual([]);
      const loose = scan(book, 'Tell me about your powers.', {
        settings: { matchWholeWords: false, recursive: false },
      });
      expect(loose.activatedEntryUids).toEqual({ eldoria: [3] });
    });

    it('§d.6 maxRecursionSteps 2 stops after the first recursion pass', () => {
      const r = scan(book, 'What magic do you have?', { settings: { maxRecursionSteps: 2 } });
      expect(r.activatedEntryUids).toEqual({ eldoria: [3, 2] });
      expect(r.placement.before.content).toBe([2, 3].map((uid) => contentOf(book, uid)).join('\n'));
    });

    it('§d.5 a 4k context trims the lowest-priority entry the recursion reached last', () => {
      const r = scan(book, 'What magic do you have?', { maxPromptTokens: 4095 - 300 });
      const total = (uids: number[]) =>
        counter.count(uids.map((uid) => `${contentOf(book, uid)}\n`).join(''));
      // Entry 1 would take the activated text past the budget (949); entry 0 still fits.
      expect(total([3, 2, 0])).toBeLessThan(949);
      expect(total([3, 2, 0, 1])).toBeGreaterThanOrEqual(949);
      expect(r.activatedEntryUids).toEqual({ eldoria: [3, 2, 0] });
      expect(r.budget.overflowed).toBe(true);
    });

    it('§d.2 scan depth: a keyword older than the scan depth does not fire', () => {
      const r = activateLorebooks({
        books: [{ id: 'eldoria', name: 'Eldoria', source: 'character', entries: book.entries }],
        messages: [
          { name: 'User', text: 'The glade is lovely.' },
          { name: 'Seraphina', text: 'Rest.' },
          { name: 'User', text: 'Thanks.' },
        ],
        maxPromptTokens: 32_000,
        seed: 'eldoria',
        substitute: stMacros,
        tokenCounter: counter,
      });
      expect(r.activated).toEqual([]);
    });
  });
});
