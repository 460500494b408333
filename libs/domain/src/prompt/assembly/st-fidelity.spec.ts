import { tokenCounter } from '../shared/token-counter';
import { assembleChatCompletion, type ChatCompletionInput } from './chat-completion';
import { splitExampleBlocks } from './examples';
import { readPreset } from './preset-prompts';

/**
 * Paths of SillyTavern 1.18's chat-completion assembly the golden example does not exercise. Every expected
 * output below was derived by hand from ST's source (`public/scripts/openai.js`, `public/script.js`); the
 * function is named next to each case.
 */

const counter = tokenCounter('o200k_base');

/** A few macros and the legacy angle tags, enough for assembly without the macro engine. */
const names = (text: string) =>
  text
    .replace(/{{user}}|<USER>/gi, 'Ann')
    .replace(/{{char}}|<BOT>|<CHAR>/gi, 'Bot')
    .replace(/{{random::[^}]*}}/gi, 'R')
    .replace(/{{scenario}}/gi, 'Scene.');

function input(overrides: Partial<ChatCompletionInput> = {}, presetExtra: Record<string, unknown> = {}) {
  const value: ChatCompletionInput = {
    preset: {
      prompts: [
        { identifier: 'main', role: 'system', content: 'Main.', system_prompt: true },
        { identifier: 'jailbreak', role: 'system', content: 'JB', system_prompt: true },
        { identifier: 'chatHistory', marker: true, system_prompt: true },
        { identifier: 'dialogueExamples', marker: true, system_prompt: true },
      ],
      prompt_order: [
        {
          character_id: 100001,
          order: [
            { identifier: 'main', enabled: true },
            { identifier: 'dialogueExamples', enabled: true },
            { identifier: 'chatHistory', enabled: true },
            { identifier: 'jailbreak', enabled: true },
          ],
        },
      ],
      ...presetExtra,
    },
    user_name: 'Ann',
    char_name: 'Bot',
    card: {},
    history: [
      { role: 'assistant', content: 'One.', name: 'Bot' },
      { role: 'user', content: 'Two.', name: 'Ann' },
      { role: 'assistant', content: 'Three {{random::x}}', name: 'Bot' },
    ],
    substitute: names,
    tokens: counter,
    ...overrides,
  };
  return value;
}

const contents = (messages: Array<{ content: string }>) => messages.map((m) => m.content);

describe('SillyTavern fidelity of the assembly (paths beyond the golden example)', () => {
  it('puts lorebook "before examples" entries in reverse order in front of the card examples', () => {
    // ST script.js `Generate`: `for (const example of worldInfoExamples)` (EMEntries, ascending order):
    // position before → `mesExamplesArray.unshift(...cleanedExample)`, after → `push`. With EMEntries
    // [b1 (order 1), b2 (order 2), a1, a2] the blocks are b2, b1, card, a1, a2.
    const { messages } = assembleChatCompletion(
      input({
        card: { mes_example: '<START>\nBot: card' },
        world_info_examples_before: ['<START>\nBot: b1', '<START>\nBot: b2'],
        world_info_examples_after: ['<START>\nBot: a1', '<START>\nBot: a2'],
      }),
    );
    const examples = messages.filter((m) => m.name === 'example_assistant').map((m) => m.content);
    expect(examples).toEqual(['b2', 'b1', 'card', 'a1', 'a2']);
  });

  it('splits example text as ST `parseMesExamples`: the leading <START> check is case-sensitive', () => {
    // ST script.js `parseMesExamples`: `if (!examplesStr.startsWith('<START>')) examplesStr = '<START>\n' +
    // examplesStr.trim()`, then `.split(/<START>/gi).slice(1).map(b => `<START>\n${b.trim()}\n`)`.
    expect(splitExampleBlocks('<start>\nAnn: hi')).toEqual(['<START>\n\n', '<START>\nAnn: hi\n']);
    expect(splitExampleBlocks('<START>\n')).toEqual(['<START>\n\n']);
    expect(splitExampleBlocks('<START>')).toEqual([]);
    expect(splitExampleBlocks('')).toEqual([]);
    // The empty block still gets its separator (ST `populateDialogueExamples` inserts `newExampleChat`
    // for every dialogue that fits, even one without messages).
    const { messages } = assembleChatCompletion(input({ card: { mes_example: '<start>\nBot: x' } }));
    expect(contents(messages).slice(0, 4)).toEqual(['Main.', '[Example Chat]', '[Example Chat]', 'x']);
  });

  it('a marker missing from prompt_order (not disabled) is placed after everything else, as ST appends it', () => {
    // ST openai.js `preparePromptsForChatCompletion`: a system prompt (charDescription, scenario, …) with no
    // prompt in the collection is `prompts.add(newPrompt)`-ed at the end; `populateChatCompletion`'s
    // `addToChatCompletion` only skips it when `isPromptDisabledForActiveCharacter` (an order entry with
    // enabled false), so it lands after chatHistory and jailbreak. A disabled entry keeps it out.
    const { messages } = assembleChatCompletion(
      input({ card: { description: 'Desc.', scenario: 'Scene.' } }),
    );
    expect(contents(messages).slice(-3)).toEqual(['JB', 'Desc.', 'Scene.']);
    const preset = input().preset as { prompt_order: Array<{ order: unknown[] }> };
    preset.prompt_order[0].order.push({ identifier: 'scenario', enabled: false });
    const disabled = assembleChatCompletion(
      input({ preset, card: { description: 'Desc.', scenario: 'Scene.' } }),
    );
    expect(contents(disabled.messages).slice(-2)).toEqual(['JB', 'Desc.']);
  });

  it('expands macros in wi_format (ST `preparePrompt` runs over the formatted world info)', () => {
    // ST openai.js `preparePromptsForChatCompletion`: `{ content: formatWorldInfo(worldInfoBefore) }` is
    // merged through `promptManager.preparePrompt(prompt)` → `substituteParams`.
    const { messages } = assembleChatCompletion(
      input({ world_info_before: 'Lore.' }, { wi_format: '[{{char}} lore]\n{0}' }),
    );
    expect(contents(messages)).toContain('[Bot lore]\nLore.');
  });

  it('a preset lacking ST’s default prompts gets them; non-empty legacy texts replace their content', () => {
    // ST PromptManager.js `checkForMissingPrompts` pushes `chatCompletionDefaultPrompts` entries the preset
    // lacks; `registerPromptManagerMigration` writes a non-empty `main_prompt` into the `main` prompt.
    const read = readPreset({
      prompts: [{ identifier: 'chatHistory', marker: true, system_prompt: true }],
      prompt_order: [{ character_id: 100001, order: [{ identifier: 'main', enabled: true }] }],
    });
    expect(read.prompts.get('main')?.content).toBe(
      "Write {{char}}'s next reply in a fictional chat between {{charIfNotGroup}} and {{user}}.",
    );
    expect(read.prompts.get('jailbreak')?.content).toBe('');
    expect(read.unresolved_preset_markers).toEqual([]);
    const legacy = readPreset({
      main_prompt: 'Legacy main',
      prompts: [{ identifier: 'main', role: 'system', content: 'New main', system_prompt: true }],
    });
    expect(legacy.prompts.get('main')?.content).toBe('Legacy main');
  });

  it('continue_prefill: takes the message out before the in-chat injections and sends it last, as stored', () => {
    // ST openai.js `populateChatCompletion`: `messages.shift()` (newest first, before
    // `populationInjectionPrompts`), content `[assistantPrefill, chatMessage.content].join('\n\n')` with no
    // macro pass, added to the control prompts (last). The depth-1 injection then lands before "Two."
    // (the newest remaining message), not before "Three".
    const { messages, trace } = assembleChatCompletion(
      input(
        {
          generation_type: 'continue',
          depth_injections: [
            {
              content: 'AT1',
              depth: 1,
              role: 'system',
              order: 100,
              kind: 'extension',
              key: 'k',
              source_id: 'k',
            },
          ],
        },
        { continue_prefill: true },
      ),
    );
    expect(contents(messages)).toEqual([
      'Main.',
      '[Start a new Chat]',
      'One.',
      'AT1',
      'Two.',
      'JB',
      'Three {{random::x}}',
    ]);
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: 'Three {{random::x}}' });
    expect(trace.assistant_prefill_strategy).toBe('continue_prefill');
  });

  it('continue_prefill: the Claude prefill goes in front, and a name only for names_behavior 1', () => {
    // ST openai.js `populateChatCompletion`: prefill only for an assistant message on Claude;
    // `chatMessage.name && namesInCompletion && continueMessage.setName(sanitizeName(name))`.
    const claude = assembleChatCompletion(
      input(
        { generation_type: 'continue', supports_assistant_prefill: true },
        {
          continue_prefill: true,
          assistant_prefill: 'Sure, <USER>:',
          names_behavior: 1,
        },
      ),
    );
    expect(claude.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Sure, Ann:\n\nThree {{random::x}}',
      name: 'Bot',
    });
  });

  it('continue with the nudge: the continued message loses its name; {{lastChatMessage}} is the bare text', () => {
    // ST openai.js `populateChatHistory`: the continued message is rebuilt with `Message.fromPromptAsync`,
    // which never sets a name; the nudge is `substituteParamsExtended(continue_nudge_prompt,
    // { lastChatMessage: String(cyclePrompt).trim() })`. ST script.js `Generate` builds `chat2[i] =
    // coreChat[j].mes` for chat completion (the `${name}: ${mes}` form is text completion's
    // `formatMessageHistoryItem`) and takes `cyclePrompt = chat2.shift()`, so no speaker prefix;
    // `preparePrompt` then expands the inserted macros.
    const { messages } = assembleChatCompletion(
      input(
        { generation_type: 'continue' },
        {
          names_behavior: 1,
          continue_nudge_prompt: '[Continue: {{lastChatMessage}}]',
        },
      ),
    );
    expect(messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Three R' },
      { role: 'system', content: '[Continue: Three R]' },
    ]);
    expect(messages.find((m) => m.content === 'Two.')).toEqual({
      role: 'user',
      content: 'Two.',
      name: 'Ann',
    });
  });

  it('assistant prefill (Claude): applied on a continue with the nudge, never on quiet', () => {
    // ST openai.js `createGenerationParameters`: `if (type !== 'quiet' && !(type === 'continue' &&
    // settings.continue_prefill)) generate_data.assistant_prefill = …`.
    const cont = assembleChatCompletion(
      input(
        { generation_type: 'continue', supports_assistant_prefill: true },
        { assistant_prefill: 'Sure,' },
      ),
    );
    expect(cont.messages.at(-1)).toEqual({ role: 'assistant', content: 'Sure,' });
    expect(cont.messages.at(-2)?.content).toBe(
      '[Continue your last message without repeating its original content.]',
    );
    const quiet = assembleChatCompletion(
      input(
        { generation_type: 'quiet', quiet_prompt: 'Summarise.', supports_assistant_prefill: true },
        {
          assistant_prefill: 'Sure,',
        },
      ),
    );
    expect(quiet.messages.at(-1)).toEqual({ role: 'system', content: 'Summarise.' });
    expect(quiet.trace.assistant_prefill_applied).toBe(false);
  });

  it("continue with the nudge and no history: ST still sends the nudge (`chat2` is `['']` plus the postfix)", () => {
    // ST script.js `Generate`: `if (chat2.length == 0) chat2.push('')`, `cyclePrompt = chat2.shift()`, then
    // `cyclePrompt += continue_postfix` (default ' '); openai.js `populateChatHistory` builds the nudge when
    // `cyclePrompt` is truthy, with `{{lastChatMessage}}` trimmed to ''. With an empty postfix there is none.
    const withPostfix = assembleChatCompletion(
      input(
        { generation_type: 'continue', history: [] },
        { continue_nudge_prompt: '[Go on: {{lastChatMessage}}]' },
      ),
    );
    expect(withPostfix.messages.at(-1)).toEqual({ role: 'system', content: '[Go on: ]' });
    const noPostfix = assembleChatCompletion(
      input(
        { generation_type: 'continue', history: [] },
        { continue_nudge_prompt: '[Go on: {{lastChatMessage}}]', continue_postfix: '' },
      ),
    );
    expect(noPostfix.messages.map((m) => m.content)).not.toContain('[Go on: ]');
  });

  it('ignores an old preset’s wrap_in_quotes (ST 1.18 `setOpenAIMessages` has no quoting)', () => {
    const { messages } = assembleChatCompletion(input({}, { wrap_in_quotes: true }));
    expect(messages.find((m) => m.role === 'user')?.content).toBe('Two.');
  });

  it('expands legacy angle tags in history text without curly braces (ST `preparePrompt` → macros)', () => {
    const { messages } = assembleChatCompletion(
      input({ history: [{ role: 'user', content: 'I am <USER>, you are <BOT>.', name: 'Ann' }] }),
    );
    expect(messages.find((m) => m.role === 'user')?.content).toBe('I am Ann, you are Bot.');
  });
});
