import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseWorldbook } from '../../formats/worldbook';
import { buildPrompt } from './build-prompt';
import type { PromptEngineInput } from './engine.types';

const GOLDEN = join(__dirname, '..', '__fixtures__', 'golden-example', 'a-default-seraphina-first-message');
const readJson = (...parts: string[]) => JSON.parse(readFileSync(join(GOLDEN, ...parts), 'utf8'));

/** The golden example's inputs as a Hearth turn: the card's linked world (Eldoria) as the character book. */
function goldenInput(): PromptEngineInput {
  const card = readJson('inputs', 'card', 'Seraphina.ccv3.chara_card_v3.json').data;
  const preset = readJson('inputs', 'preset', 'openai_Default.st-1.18.0.json');
  const settings = readJson('inputs', 'settings.json');
  const book = parseWorldbook(readJson('inputs', 'worldbooks', 'Eldoria.st-1.18.0.json'));
  const history = readFileSync(join(GOLDEN, 'inputs', 'history.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line));
  const wi = settings.world_info;
  return {
    seed: 'golden',
    now: Date.UTC(2026, 10, 21, 21, 18, 40),
    intent: 'normal',
    user: { name: settings.persona.name, description: settings.persona.description, in_prompt: true },
    character: { id: 'chr_seraphina', version_id: 'chrv_1', data: card },
    preset: {
      id: 'prs_default',
      version: 1,
      data: {
        ...preset,
        openai_max_context: settings.chat_completion.openai_max_context,
        openai_max_tokens: settings.chat_completion.openai_max_tokens,
      },
    },
    lorebooks: [{ id: 'wb_eldoria', name: 'Eldoria', source: 'character', entries: book.entries }],
    lorebook_settings: {
      scanDepth: wi.world_info_depth,
      minActivations: wi.world_info_min_activations,
      budgetPercent: wi.world_info_budget,
      budgetCap: wi.world_info_budget_cap,
      includeNames: wi.world_info_include_names,
      recursive: wi.world_info_recursive,
      maxRecursionSteps: wi.world_info_max_recursion_steps,
      caseSensitive: wi.world_info_case_sensitive,
      matchWholeWords: wi.world_info_match_whole_words,
      useGroupScoring: wi.world_info_use_group_scoring,
    },
    regex: null,
    history: history.map((m: { is_user: boolean; mes: string; name: string }, i: number) => ({
      floor_no: i,
      role: m.is_user ? 'user' : 'assistant',
      name: m.name,
      content: m.mes,
    })),
    user_input: readFileSync(join(GOLDEN, 'inputs', 'user_message.txt'), 'utf8').replace(/\n$/, ''),
    next_floor_no: history.length,
    provider: { kind: 'openai-compatible', model_id: 'fake-model' },
  };
}

describe('prompt engine', () => {
  it('reproduces the request SillyTavern 1.18 assembled (golden example), byte for byte', () => {
    const result = buildPrompt(goldenInput());
    expect(result.messages).toEqual(readJson('request.json').messages);
    expect(result.prompt_snapshot.worldbook_activated_entry_uids.length).toBeGreaterThan(0);
    expect(result.prompt_snapshot.prompt_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(result.assembly.selected_prompt_order_character_id).toBe(100001);
  });

  it('is deterministic for a seed, and the digest follows the messages', () => {
    const a = buildPrompt(goldenInput());
    const b = buildPrompt(goldenInput());
    expect(b.messages).toEqual(a.messages);
    expect(b.prompt_snapshot.prompt_digest).toBe(a.prompt_snapshot.prompt_digest);
    const changed = buildPrompt({ ...goldenInput(), user_input: 'Something else entirely.' });
    expect(changed.prompt_snapshot.prompt_digest).not.toBe(a.prompt_snapshot.prompt_digest);
  });

  it('stages macro writes instead of applying them, and reports them', () => {
    const input = goldenInput();
    const result = buildPrompt({
      ...input,
      user_input: '{{setvar::mood::happy}}I feel {{getvar::mood}}.',
      variables: { local: {}, global: {} },
    });
    expect(result.messages.at(-1)?.content).toBe('I feel happy.');
    expect(result.runtime_trace.macro.mutation_preview.local).toEqual({ mood: 'happy' });
    expect(result.runtime_trace.macro.staged_mutations).toHaveLength(1);
  });

  it('applies policy: hidden floors, windowed history and structure', () => {
    const input = goldenInput();
    const history = Array.from({ length: 10 }, (_, i) => ({
      floor_no: i,
      role: (i % 2 ? 'user' : 'assistant') as 'user' | 'assistant',
      name: i % 2 ? 'User' : 'Seraphina',
      content: `line ${i}`,
    }));
    const result = buildPrompt({
      ...input,
      history,
      policy_layers: [
        {
          source: 'session_policy',
          value: { visibility: { hidden_floor_ranges: [{ start_floor_no: 0, end_floor_no: 1 }] } },
        },
        {
          source: 'request_override',
          value: {
            source_selection: { history: { mode: 'windowed', max_messages: 4 } },
            structure: { mode: 'flattened' },
          },
        },
      ],
    });
    const transcript = result.messages.at(-1)?.content ?? '';
    expect(transcript).toContain('line 9');
    expect(transcript).not.toContain('line 5');
    expect(result.runtime_trace.structure.transcriptized).toBe(true);
    expect(result.runtime_trace.source_selection.excluded_sources).toEqual(
      expect.arrayContaining([
        { kind: 'history', reason: 'hidden_floor_range', count: 2 },
        { kind: 'history', reason: 'history_window', count: 4 },
      ]),
    );
  });

  it('applies request injections and reports every item', () => {
    const result = buildPrompt({
      ...goldenInput(),
      prompt_mode: 'compat_plus',
      injections: [
        {
          scope: 'request',
          source_kind: 'client_injection',
          title: 'Weather',
          content: 'It is raining.',
          placement: 'before_current_user_input',
        },
        {
          scope: 'request',
          source_kind: 'client_injection',
          title: 'Lore',
          content: 'Extra lore line.',
          placement: 'worldbook_after',
        },
        {
          scope: 'request',
          source_kind: 'client_injection',
          title: 'Bad',
          content: 'x',
          placement: 'nowhere',
        },
      ],
    });
    const contents = result.messages.map((m) => m.content);
    expect(contents.at(-2)).toBe('It is raining.');
    expect(contents).toContain('Extra lore line.');
    expect(result.runtime_trace.injection).toMatchObject({
      requested_count: 3,
      applied_count: 2,
      rejected_count: 1,
    });
    expect(result.runtime_trace.injection.items[2].not_applied_reason).toBe('unknown_placement');
  });

  it('never exceeds the budget with history and never reorders it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 300, max: 3000 }),
        fc.integer({ min: 0, max: 60 }),
        (maxContext, count) => {
          const history = Array.from({ length: count }, (_, i) => ({
            floor_no: i,
            role: (i % 2 ? 'user' : 'assistant') as 'user' | 'assistant',
            name: i % 2 ? 'User' : 'Seraphina',
            content: `message ${i} ${'word '.repeat(i % 7)}`,
          }));
          const input = goldenInput();
          const result = buildPrompt({
            ...input,
            lorebooks: [],
            history,
            user_input: 'now',
            generation_params: { max_context_tokens: maxContext, max_output_tokens: 100 },
          });
          const numbers = result.messages
            .map((m) => /^message (\d+)/.exec(m.content)?.[1])
            .filter((n): n is string => n !== undefined)
            .map(Number);
          expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
          if (!result.runtime_trace.assembly.budget.mandatory_exceeded) {
            expect(result.runtime_trace.assembly.budget.used).toBeLessThanOrEqual(maxContext - 100 + 3);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('reports an overflow of what is always placed (the new chat prompt) as mandatory_exceeded', () => {
    // Found by the budget property: at 813 the new chat prompt no longer fits once the mandatory prompts
    // are placed; it is still sent (as in SillyTavern), so the overflow is reported.
    for (const maxContext of [700, 813, 820, 900, 2000]) {
      const result = buildPrompt({
        ...goldenInput(),
        lorebooks: [],
        history: [],
        user_input: 'now',
        generation_params: { max_context_tokens: maxContext, max_output_tokens: 100 },
      });
      const budget = result.runtime_trace.assembly.budget;
      expect(budget.mandatory_exceeded).toBe(budget.used > budget.available);
    }
  });

  it('never throws on malformed inputs', () => {
    const input = goldenInput();
    const result = buildPrompt({
      ...input,
      preset: { data: 'not a preset' },
      character: { data: { name: 42, description: ['x'] } as unknown as Record<string, unknown> },
      lorebooks: [
        {
          id: 'b',
          name: 'b',
          source: 'global',
          entries: [{ uid: 1, keys: ['/((/'], content: 'x' } as never],
        },
      ],
      regex: { scripts: [{ script: { scriptName: 'bad', findRegex: '/(/', placement: [1] } }] },
      policy_layers: [{ source: 'session_policy', value: { structure: { mode: 'nope' } } }],
    });
    expect(result.messages.length).toBeGreaterThan(0);
    expect(result.runtime_trace.policy.warnings.length).toBeGreaterThan(0);
  });

  describe('regex findRegex with macros (ST substituteRegex: 1 raw, 2 macro values escaped)', () => {
    const script = (substituteRegex: number) => ({
      scriptName: `sub ${substituteRegex}`,
      findRegex: '/{{user}}/g',
      replaceString: '[name]',
      placement: [1],
      substituteRegex,
    });
    const promptOf = (substituteRegex: number, engine: 'v2' | 'classic') => {
      const result = buildPrompt({
        ...goldenInput(),
        macro_engine: engine,
        user: { name: 'A.J.', description: '', in_prompt: true },
        user_input: 'AxJx met A.J. here',
        regex: { scripts: [{ script: script(substituteRegex) }] },
      });
      return JSON.stringify(result.messages);
    };
    it.each(['v2', 'classic'] as const)('%s: 2 matches the name literally, 1 as a pattern', (engine) => {
      expect(promptOf(2, engine)).toContain('AxJx met [name] here');
      expect(promptOf(1, engine)).toContain('[name] met [name] here');
    });
  });
});
