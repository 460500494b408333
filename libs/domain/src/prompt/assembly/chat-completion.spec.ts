import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenCounter } from '../shared/token-counter';
import { assembleChatCompletion, type ChatCompletionInput, type ChatHistoryEntry } from './chat-completion';
import { parseExampleBlock, splitExampleBlocks } from './examples';
import { insertDepthInjections, type DepthInjection } from './in-chat-injections';
import { readPreset } from './preset-prompts';

const GOLDEN = join(__dirname, '..', '__fixtures__', 'golden-example', 'a-default-seraphina-first-message');
const readJson = (...parts: string[]) => JSON.parse(readFileSync(join(GOLDEN, ...parts), 'utf8'));

/** Identity macros only: enough to test assembly without the macro engine. */
const names = (user: string, char: string) => (text: string) =>
  text.replace(/{{user}}/gi, user).replace(/{{char}}/gi, char);

const counter = tokenCounter('o200k_base');

function base(overrides: Partial<ChatCompletionInput> = {}): ChatCompletionInput {
  return {
    preset: {
      prompts: [
        { identifier: 'main', role: 'system', content: 'Main for {{char}}.', system_prompt: true },
        { identifier: 'jailbreak', role: 'system', content: 'JB', system_prompt: true },
        { identifier: 'nsfw', role: 'system', content: '', system_prompt: true },
        { identifier: 'chatHistory', marker: true, system_prompt: true },
        { identifier: 'dialogueExamples', marker: true, system_prompt: true },
        { identifier: 'charDescription', marker: true, system_prompt: true },
      ],
      prompt_order: [
        {
          character_id: 100001,
          order: [
            { identifier: 'main', enabled: true },
            { identifier: 'charDescription', enabled: true },
            { identifier: 'dialogueExamples', enabled: true },
            { identifier: 'chatHistory', enabled: true },
            { identifier: 'jailbreak', enabled: true },
          ],
        },
      ],
    },
    user_name: 'Ann',
    char_name: 'Bot',
    card: { description: 'A bot.' },
    history: [
      { role: 'assistant', content: 'Hello.', name: 'Bot' },
      { role: 'user', content: 'Hi!', name: 'Ann' },
    ],
    substitute: names('Ann', 'Bot'),
    tokens: counter,
    ...overrides,
  };
}

describe('chat-completion assembly (external-formats.md §e.3)', () => {
  it('places prompts by prompt_order, with the new-chat separator before the history', () => {
    const { messages, trace } = assembleChatCompletion(base());
    expect(messages).toEqual([
      { role: 'system', content: 'Main for Bot.' },
      { role: 'system', content: 'A bot.' },
      { role: 'system', content: '[Start a new Chat]' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Hi!' },
      { role: 'system', content: 'JB' },
    ]);
    expect(trace.selected_prompt_order_character_id).toBe(100001);
    expect(trace.history).toEqual({ total: 2, included: 2, dropped_oldest: 0 });
  });

  it('keeps a disabled main as an empty anchor and skips other disabled prompts (§e.2)', () => {
    const input = base();
    (
      input.preset as { prompt_order: Array<{ order: Array<{ identifier: string; enabled: boolean }> }> }
    ).prompt_order[0].order[0].enabled = false;
    (
      input.preset as { prompt_order: Array<{ order: Array<{ identifier: string; enabled: boolean }> }> }
    ).prompt_order[0].order[4].enabled = false;
    const { messages } = assembleChatCompletion({
      ...input,
      in_prompt_extensions: [
        { identifier: 'authorsNote', content: 'AN text', role: 'system', position: 'end' },
      ],
    });
    expect(messages.map((m) => m.content)).toEqual([
      'AN text',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Hi!',
    ]);
  });

  it('filters prompts by injection_trigger and reports them', () => {
    const input = base({ generation_type: 'impersonate' });
    (input.preset as { prompts: Array<Record<string, unknown>> }).prompts[1].injection_trigger = ['normal'];
    const { messages, trace } = assembleChatCompletion(input);
    expect(trace.trigger_filtered_entry_ids).toEqual(['jailbreak']);
    expect(messages.at(-1)?.content).toMatch(/^\[Write your next reply from the point of view of Ann/);
  });

  it('applies card overrides with {{original}}, unless forbid_overrides (§e.3 step 3)', () => {
    const sub = (text: string, o?: { original?: string }) =>
      names('Ann', 'Bot')(text).replace(/{{original}}/g, o?.original ?? '');
    const first = assembleChatCompletion(
      base({
        card: { description: 'A bot.', system_prompt: 'Card main, then {{original}}' },
        substitute: sub,
      }),
    );
    expect(first.messages[0].content).toBe('Card main, then Main for Bot.');
    expect(first.trace.card_overrides.main).toBe(true);
    const input = base({
      card: { description: 'A bot.', post_history_instructions: 'Card JB' },
      substitute: sub,
    });
    (input.preset as { prompts: Array<Record<string, unknown>> }).prompts[1].forbid_overrides = true;
    expect(assembleChatCompletion(input).messages.at(-1)?.content).toBe('JB');
  });

  it('drops the oldest history first when the budget is short and keeps mandatory prompts', () => {
    const history: ChatHistoryEntry[] = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `message number ${i} with some words to count`,
      name: i % 2 === 0 ? 'Ann' : 'Bot',
    }));
    const { messages, trace } = assembleChatCompletion(
      base({ history, max_context_tokens: 300, max_output_tokens: 50 }),
    );
    expect(trace.history.included).toBeLessThan(40);
    expect(trace.history.dropped_oldest).toBe(40 - trace.history.included);
    const kept = messages.filter((m) => m.content.startsWith('message number'));
    expect(kept.at(-1)?.content).toContain('message number 39');
    const numbers = kept.map((m) => Number(/number (\d+)/.exec(m.content)?.[1]));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(trace.budget.used).toBeLessThanOrEqual(250);
  });

  it('prefixes names in content for names_behavior 2 and sets name fields for 1', () => {
    const two = assembleChatCompletion(base({ preset: { ...(base().preset as object), names_behavior: 2 } }));
    expect(two.messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual([
      'Bot: Hello.',
      'Ann: Hi!',
    ]);
    const one = assembleChatCompletion(base({ preset: { ...(base().preset as object), names_behavior: 1 } }));
    expect(one.messages.filter((m) => m.role !== 'system').map((m) => m.name)).toEqual(['Bot', 'Ann']);
  });

  it('sends narrator messages as system without a prefix', () => {
    const { messages } = assembleChatCompletion(
      base({
        preset: { ...(base().preset as object), names_behavior: 2 },
        history: [{ role: 'assistant', content: 'The wind howls.', name: 'Narrator', is_narrator: true }],
      }),
    );
    expect(messages).toContainEqual({ role: 'system', content: 'The wind howls.' });
  });

  it('adds example blocks after the history with the [Example Chat] separator (§e.3 step 7)', () => {
    const { messages } = assembleChatCompletion(
      base({
        card: { description: 'A bot.', mes_example: '<START>\nAnn: ping\nBot: pong\n<START>\nBot: solo' },
      }),
    );
    const exampleSlot = messages.slice(2, 7);
    expect(exampleSlot).toEqual([
      { role: 'system', content: '[Example Chat]' },
      { role: 'system', content: 'ping', name: 'example_user' },
      { role: 'system', content: 'pong', name: 'example_assistant' },
      { role: 'system', content: '[Example Chat]' },
      { role: 'system', content: 'solo', name: 'example_assistant' },
    ]);
  });

  it('moves the last message behind the continue nudge', () => {
    const { messages, trace } = assembleChatCompletion(
      base({
        generation_type: 'continue',
        history: [{ role: 'assistant', content: 'Half a sen', name: 'Bot' }],
      }),
    );
    expect(messages.slice(-3).map((m) => m.content)).toEqual([
      'JB',
      'Half a sen',
      '[Continue your last message without repeating its original content.]',
    ]);
    expect(trace.continue_nudge_applied).toBe(true);
  });

  it('applies the assistant prefill only when the source supports it (§j)', () => {
    const preset = { ...(base().preset as object), assistant_prefill: 'Sure,' };
    expect(assembleChatCompletion(base({ preset })).messages.at(-1)?.content).toBe('JB');
    const claude = assembleChatCompletion(base({ preset, supports_assistant_prefill: true }));
    expect(claude.messages.at(-1)).toEqual({ role: 'assistant', content: 'Sure,' });
    expect(claude.trace.assistant_prefill_applied).toBe(true);
  });

  it('squashes consecutive unnamed system messages but not the separators', () => {
    const { messages } = assembleChatCompletion(
      base({ preset: { ...(base().preset as object), squash_system_messages: true } }),
    );
    expect(messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'Main for Bot.\nA bot.' },
      { role: 'system', content: '[Start a new Chat]' },
    ]);
  });

  it('never throws on a malformed preset and reports it', () => {
    const { messages, trace } = assembleChatCompletion(
      base({ preset: { prompts: 'nope', prompt_order: 7, names_behavior: 'x', frobnicate: 1 } }),
    );
    expect(messages.length).toBeGreaterThan(0);
    expect(trace.preset_warnings.map((w) => w.code)).toEqual(
      expect.arrayContaining(['preset_field_invalid']),
    );
    expect(trace.unsupported_preset_fields).toEqual(['frobnicate']);
    expect(assembleChatCompletion(base({ preset: null })).messages.length).toBeGreaterThan(0);
  });
});

describe('prompt order selection (§e.2)', () => {
  const order = (id: number | string) => ({
    character_id: id,
    order: [{ identifier: 'main', enabled: true }],
  });
  it('prefers a character-specific list, then 100001, then 100000, then ST’s default', () => {
    const preset = { prompt_order: [order(100000), order(100001), order('chr_1')] };
    expect(readPreset(preset, 'chr_1').selected_prompt_order_character_id).toBe('chr_1');
    expect(readPreset(preset, 'chr_1').ignored_prompt_order_character_ids).toEqual([100000, 100001]);
    expect(readPreset(preset).selected_prompt_order_character_id).toBe(100001);
    expect(readPreset({ prompt_order: [order(100000)] }).selected_prompt_order_character_id).toBe(100000);
    const none = readPreset({});
    expect(none.selected_prompt_order_character_id).toBeNull();
    expect(none.order.map((e) => e.identifier)).toContain('personaDescription');
  });

  it('migrates legacy main_prompt/nsfw_prompt/jailbreak_prompt and reports unknown order entries', () => {
    const read = readPreset({
      main_prompt: 'Legacy main',
      prompt_order: [
        {
          character_id: 100001,
          order: [
            { identifier: 'main', enabled: true },
            { identifier: 'ghost', enabled: true },
          ],
        },
      ],
    });
    expect(read.prompts.get('main')?.content).toBe('Legacy main');
    expect(read.unresolved_preset_markers).toEqual(['ghost']);
  });
});

describe('in-chat injections (§e.4)', () => {
  const inj = (
    content: string,
    depth: number,
    role: DepthInjection['role'],
    order = 100,
    kind: DepthInjection['kind'] = 'extension',
  ): DepthInjection => ({
    content,
    depth,
    role,
    order,
    kind,
    key: content,
    source_id: content,
  });
  it('orders buckets low order first, then assistant, user, system closest to the end', () => {
    const out = insertDepthInjections(
      ['m1', 'm2', 'm3'],
      [
        inj('sys100', 1, 'system'),
        inj('usr100', 1, 'user'),
        inj('ast100', 1, 'assistant'),
        inj('sys50', 1, 'system', 50, 'preset'),
        inj('d0', 0, 'system'),
        inj('deep', 9, 'user'),
      ],
    );
    const flat = out.map((m) => (m.injected ? m.content : m.item));
    expect(flat).toEqual(['deep', 'm1', 'm2', 'sys50', 'ast100', 'usr100', 'sys100', 'm3', 'd0']);
  });
  it('joins preset prompts before extension prompts of the same bucket and role', () => {
    const out = insertDepthInjections(
      ['m1'],
      [inj('ext', 0, 'system'), inj('pre', 0, 'system', 100, 'preset')],
    );
    expect(out.map((m) => (m.injected ? m.content : m.item))).toEqual(['m1', 'pre\next']);
  });
});

describe('example dialogue parsing', () => {
  it('splits <START> blocks and keeps lines before the first speaker in the first message', () => {
    expect(splitExampleBlocks('')).toEqual([]);
    expect(splitExampleBlocks('Ann: a')).toEqual(['<START>\nAnn: a\n']);
    expect(parseExampleBlock('<START>\nintro\nAnn: hi\nBot: yo\nmore', 'Ann', 'Bot')).toEqual([
      { role: 'system', content: 'intro\n hi', name: 'example_user' },
      { role: 'system', content: 'yo\nmore', name: 'example_assistant' },
    ]);
    expect(parseExampleBlock('<START>\nno speakers here', 'Ann', 'Bot')).toEqual([]);
  });
});

describe('golden example: SillyTavern 1.18 default Seraphina (assembly given its lorebook text)', () => {
  it('reproduces the request messages byte for byte', () => {
    const request = readJson('request.json');
    const card = readJson('inputs', 'card', 'Seraphina.ccv3.chara_card_v3.json').data;
    const preset = readJson('inputs', 'preset', 'openai_Default.st-1.18.0.json');
    const settings = readJson('inputs', 'settings.json');
    const history = readFileSync(join(GOLDEN, 'inputs', 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line));
    const userText = readFileSync(join(GOLDEN, 'inputs', 'user_message.txt'), 'utf8').replace(/\n$/, '');
    const sub = names('User', 'Seraphina');
    // The lorebook text ST placed at worldInfoBefore; the activation itself is tested with the lorebook engine.
    const worldInfoBefore = request.messages[1].content;
    const result = assembleChatCompletion({
      preset: {
        ...preset,
        openai_max_context: settings.chat_completion.openai_max_context,
        openai_max_tokens: settings.chat_completion.openai_max_tokens,
      },
      user_name: 'User',
      char_name: 'Seraphina',
      card: {
        description: sub(card.description.trim()).replace(/\r/g, ''),
        personality: card.personality,
        scenario: card.scenario,
        mes_example: card.mes_example,
        system_prompt: card.system_prompt,
        post_history_instructions: card.post_history_instructions,
      },
      persona_description: '',
      persona_in_prompt: true,
      world_info_before: worldInfoBefore,
      history: [
        ...history.map((m: { is_user: boolean; mes: string; name: string }) => ({
          role: m.is_user ? ('user' as const) : ('assistant' as const),
          content: m.mes,
          name: m.name,
        })),
        { role: 'user' as const, content: userText, name: 'User' },
      ],
      substitute: sub,
      tokens: counter,
    });
    expect(result.messages).toEqual(request.messages);
  });
});
