import { stEntry } from '../lorebook/lorebook.test-support';
import { buildPrompt } from './build-prompt';
import type { PromptEngineInput } from './engine.types';

/**
 * Engine-level paths of SillyTavern 1.18 the golden example does not exercise; expected outputs derived by
 * hand from ST's source (named next to each case).
 */

function input(overrides: Partial<PromptEngineInput> = {}): PromptEngineInput {
  return {
    seed: 'st-fidelity',
    now: Date.UTC(2026, 10, 21, 12, 0, 0),
    intent: 'normal',
    user: { name: 'Ann', description: null, in_prompt: true },
    character: { id: 'chr_1', data: { name: 'Bot', description: 'A bot.' } },
    preset: {
      data: {
        prompts: [
          { identifier: 'main', role: 'system', content: 'Talk to <USER> as <BOT>.', system_prompt: true },
          { identifier: 'chatHistory', marker: true, system_prompt: true },
          { identifier: 'charDescription', marker: true, system_prompt: true },
        ],
        prompt_order: [
          {
            character_id: 100001,
            order: [
              { identifier: 'main', enabled: true },
              { identifier: 'charDescription', enabled: true },
              { identifier: 'chatHistory', enabled: true },
            ],
          },
        ],
      },
    },
    lorebooks: [],
    regex: null,
    history: [
      { floor_no: 0, role: 'assistant', name: 'Bot', content: 'Hello.' },
      { floor_no: 1, role: 'user', name: 'Ann', content: 'Hi.' },
    ],
    user_input: 'How are you?',
    next_floor_no: 2,
    provider: { kind: 'openai-compatible', model_id: 'fake-model' },
    ...overrides,
  };
}

describe('prompt engine: SillyTavern fidelity beyond the golden example', () => {
  it('author’s-note lorebook entries: top and bottom around the (empty) note, a blank line between', () => {
    // ST world-info.js `checkWorldInfo`: ANWithWI = `${ANTop.join('\n')}\n${originalAN}\n${ANBottom.join('\n')}`
    // .replace(/(^\n)|(\n$)/g, '') with originalAN '' → "T1\nT2\n\nB"; script.js `getExtensionPrompt` trims
    // it and `populationInjectionPrompts` places it at the note's depth 4 as system (before "Hello.").
    const result = buildPrompt(
      input({
        lorebooks: [
          {
            id: 'wb',
            name: 'wb',
            source: 'global',
            entries: [
              stEntry(1, { constant: true, position: 2, content: 'T1', order: 1 }),
              stEntry(2, { constant: true, position: 2, content: 'T2', order: 2 }),
              stEntry(3, { constant: true, position: 3, content: 'B' }),
            ],
          },
        ],
      }),
    );
    expect(result.messages.map((m) => m.content)).toEqual([
      'Talk to Ann as Bot.',
      'A bot.',
      '[Start a new Chat]',
      'T1\nT2\n\nB',
      'Hello.',
      'Hi.',
      'How are you?',
    ]);
  });

  it('author’s-note lorebook entries: only the bottom list leaves no blank line', () => {
    const result = buildPrompt(
      input({
        lorebooks: [
          {
            id: 'wb',
            name: 'wb',
            source: 'global',
            entries: [stEntry(3, { constant: true, position: 3, content: 'B' })],
          },
        ],
      }),
    );
    expect(result.messages.map((m) => m.content)).toContain('B');
  });

  it('character’s note: numeric role and string depth are read as ST does', () => {
    // ST script.js: `getExtensionPromptRoleByName(role)` accepts 0/1/2 as well as the names, and
    // `setExtensionPrompt` stores `Number(depth)`: role 1 at depth "1" is a user message before "Hi.".
    const result = buildPrompt(
      input({
        character: {
          id: 'chr_1',
          data: {
            name: 'Bot',
            description: 'A bot.',
            extensions: { depth_prompt: { prompt: ' Note for {{char}}. ', depth: '1', role: 1 } },
          },
        },
      }),
    );
    expect(result.messages.slice(-3)).toEqual([
      { role: 'user', content: 'Hi.' },
      { role: 'user', content: 'Note for Bot.' },
      { role: 'user', content: 'How are you?' },
    ]);
  });

  it('character’s note: a depth that is not a number places nothing', () => {
    // ST: `Number('deep')` is NaN, which equals no in-chat depth, so `getExtensionPrompt` never returns it.
    const result = buildPrompt(
      input({
        character: {
          id: 'chr_1',
          data: {
            name: 'Bot',
            description: 'A bot.',
            extensions: { depth_prompt: { prompt: 'Note for {{char}}.', depth: 'deep', role: 'system' } },
          },
        },
      }),
    );
    expect(result.messages.some((m) => String(m.content).includes('Note for Bot.'))).toBe(false);
    expect(result.messages.slice(-2)).toEqual([
      { role: 'user', content: 'Hi.' },
      { role: 'user', content: 'How are you?' },
    ]);
  });

  it('prompt regex depth: the continued message is -1, and impersonate text is not in the chat', () => {
    // ST script.js `Generate`: prompt regexes run over `coreChat` with
    // `depth: coreChat.length - index - (isContinue ? 2 : 1)`; quiet/impersonate text never joins the chat.
    // A script with minDepth 0 and maxDepth 0 touches only the message at depth 0.
    const regex = {
      scripts: [
        {
          script: {
            scriptName: 'mark',
            findRegex: '/^(.*)$/s',
            replaceString: '[$1]',
            placement: [1, 2],
            promptOnly: true,
            minDepth: 0,
            maxDepth: 0,
          },
        },
      ],
    };
    const cont = buildPrompt(input({ intent: 'continue', user_input: null, regex }));
    expect(cont.messages.map((m) => m.content).slice(-3)).toEqual([
      '[Hello.]',
      'Hi.',
      '[Continue your last message without repeating its original content.]',
    ]);
    const imp = buildPrompt(input({ intent: 'impersonate', user_input: 'draft', regex }));
    expect(imp.messages.map((m) => m.content)).toContain('[Hi.]');
  });

  it('an empty input sends no user message, so send_if_empty applies after an assistant message', () => {
    // ST script.js `Generate`: `sendMessageAsUser` only for non-empty text; openai.js `populateChatHistory`
    // then adds `send_if_empty` as a user message because the last chat message is the assistant's.
    const base = input();
    const preset = { ...(base.preset!.data as Record<string, unknown>), send_if_empty: 'Go on.' };
    const result = buildPrompt(
      input({
        user_input: '',
        preset: { data: preset },
        history: [
          { floor_no: 0, role: 'user', name: 'Ann', content: 'Hi.' },
          { floor_no: 1, role: 'assistant', name: 'Bot', content: 'Hello.' },
        ],
      }),
    );
    expect(result.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('the user input is stored, scanned and sent with its macros expanded (ST `sendMessageAsUser`)', () => {
    // ST script.js `sendMessageAsUser`: `mes: substituteParams(getRegexedString(text, USER_INPUT))`; the
    // lorebook then scans that message, so a key naming the character matches `{{char}}` in the input.
    const result = buildPrompt(
      input({
        user_input: 'Where does {{char}} live?',
        lorebooks: [
          {
            id: 'wb',
            name: 'wb',
            source: 'global',
            entries: [stEntry(1, { key: ['Bot'], content: 'Bot lives in a tower.', position: 1 })],
          },
        ],
        lorebook_settings: { scanDepth: 1, includeNames: false },
      }),
    );
    expect(result.user_input_processed).toBe('Where does Bot live?');
    // The preset's order has no worldInfoAfter, so ST appends that marker after everything else.
    expect(result.messages.map((m) => m.content)).toEqual([
      'Talk to Ann as Bot.',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Hi.',
      'Where does Bot live?',
      'Bot lives in a tower.',
    ]);
  });

  it('legacy angle tags in a preset prompt without curly braces are expanded (ST macro pre-processors)', () => {
    // ST macros.js `evaluateMacros` (pre-env `<USER>`/`<BOT>`) and the new engine's pre-processors run on
    // every prompt, with or without `{{`.
    expect(buildPrompt(input()).messages[0]).toEqual({ role: 'system', content: 'Talk to Ann as Bot.' });
  });
  it('chat macros in the prompt see the sent message; the message’s own expansion does not', () => {
    // ST script.js `sendMessageAsUser`: `mes: substituteParams(messageText)` is computed before
    // `chat.push(message)`; `Generate` then assembles the prompt over a chat that ends with it, so
    // `{{lastMessage}}` / `{{lastUserMessage}}` / `{{lastMessageId}}` (chat-macros.js, reading `chat`) are the
    // new message there.
    const base = input();
    const data = base.preset!.data as { prompts: Array<Record<string, unknown>> };
    data.prompts[0] = {
      identifier: 'main',
      role: 'system',
      content: 'Last: {{lastMessage}} | user: {{lastUserMessage}} | id: {{lastMessageId}}',
      system_prompt: true,
    };
    const result = buildPrompt({ ...base, user_input: 'New. (prev: {{lastMessage}})' });
    expect(result.user_input_processed).toBe('New. (prev: Hi.)');
    expect(result.messages[0].content).toBe('Last: New. (prev: Hi.) | user: New. (prev: Hi.) | id: 2');
    expect(result.messages.at(-1)).toEqual({ role: 'user', content: 'New. (prev: Hi.)' });
  });

  it('an empty input on a normal generation sends send_if_empty, trimmed and expanded, as the user message', () => {
    // ST script.js `Generate`: `else if (textareaText == '' && !automatic_trigger && !dryRun &&
    // [undefined, 'normal'].includes(type) && main_api == 'openai' && oai_settings.send_if_empty.trim().length
    // > 0) await sendMessageAsUser(oai_settings.send_if_empty.trim(), messageBias)`: a stored user message,
    // so openai.js `populateChatHistory` adds no `emptyUserMessageReplacement` after it.
    const base = input({
      user_input: '',
      history: [{ floor_no: 0, role: 'assistant', name: 'Bot', content: 'Hello.' }],
    });
    const data = base.preset!.data as Record<string, unknown>;
    data.send_if_empty = '  Go on, {{char}}.  ';
    const normal = buildPrompt(base);
    expect(normal.user_input_processed).toBe('Go on, Bot.');
    expect(normal.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Go on, Bot.' },
    ]);
    // Other generation types keep ST's in-prompt replacement (untrimmed, not stored).
    const impersonate = buildPrompt({ ...base, intent: 'impersonate' });
    expect(impersonate.user_input_processed).toBe('');
  });
  it('lorebook scan sources are the card fields after their macro pass (ST `getCharacterCardFields`)', () => {
    // ST script.js `Generate`: `globalScanData = { personaDescription: persona, characterDescription:
    // description, … }` with the values of `getCharacterCardFields()`, each `baseChatReplace`d; world-info.js
    // `WorldInfoBuffer.get` appends them for `matchCharacterDescription` / `matchPersonaDescription`.
    const book = (fields: Record<string, unknown>) => [
      {
        id: 'wb',
        name: 'wb',
        source: 'global' as const,
        entries: [stEntry(1, { content: 'Found.', position: 1, ...fields })],
      },
    ];
    const base = input({ user_input: 'Nothing here.', lorebook_settings: { scanDepth: 1 } });
    const byDescription = buildPrompt({
      ...base,
      character: { id: 'chr_1', data: { name: 'Bot', description: 'Friend of {{user}}.' } },
      lorebooks: book({ key: ['Ann'], matchCharacterDescription: true }),
    });
    expect(byDescription.messages.map((m) => m.content)).toContain('Found.');
    expect(byDescription.messages[1].content).toBe('Friend of Ann.');
    const byPersona = buildPrompt({
      ...base,
      user: { name: 'Ann', description: 'Knows {{char}}.', in_prompt: false },
      lorebooks: book({ key: ['Bot'], matchPersonaDescription: true }),
    });
    expect(byPersona.messages.map((m) => m.content)).toContain('Found.');
  });

  it('a quiet generation’s prompt is scanned by the lorebook (ST QUIET_PROMPT extension prompt, scan: true)', () => {
    // ST script.js `Generate`: `setExtensionPrompt(inject_ids.QUIET_PROMPT, quiet_prompt || '', IN_PROMPT, 0,
    // true)` right before `getWorldInfoPrompt`; world-info.js `checkWorldInfo` `buffer.addInject(prompt)` for
    // every extension prompt with `scan`.
    const result = buildPrompt(
      input({
        intent: 'quiet',
        user_input: 'Summarise the dragon fight.',
        lorebook_settings: { scanDepth: 1 },
        lorebooks: [
          {
            id: 'wb',
            name: 'wb',
            source: 'global',
            entries: [stEntry(1, { key: ['dragon'], content: 'Dragons breathe fire.', position: 1 })],
          },
        ],
      }),
    );
    expect(result.messages.map((m) => m.content)).toContain('Dragons breathe fire.');
  });
  it('{{input}} is the emptied input box on a normal send, the typed text on an impersonation', () => {
    // ST script.js `Generate`: `textareaText = String($('#send_textarea').val()); $('#send_textarea').val('')`
    // for every type but regenerate, swipe, quiet and impersonate, before `sendMessageAsUser` and the
    // assembly; `{{input}}` reads `#send_textarea`.
    const base = input();
    const data = base.preset!.data as { prompts: Array<Record<string, unknown>> };
    data.prompts[0] = {
      identifier: 'main',
      role: 'system',
      content: 'Box: [{{input}}]',
      system_prompt: true,
    };
    const normal = buildPrompt({ ...base, user_input: 'Typed {{input}}.' });
    expect(normal.messages[0].content).toBe('Box: []');
    expect(normal.user_input_processed).toBe('Typed .');
    const impersonate = buildPrompt({ ...base, intent: 'impersonate', user_input: 'Wave.' });
    expect(impersonate.messages[0].content).toBe('Box: [Wave.]');
  });
});
