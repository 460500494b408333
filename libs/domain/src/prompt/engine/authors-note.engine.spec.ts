import { stEntry } from '../lorebook/lorebook.test-support';
import type { AuthorsNote } from './authors-note';
import { authorsNoteSchedule, mergeAuthorsNote } from './authors-note-prompt';
import { buildPrompt } from './build-prompt';
import type { PromptEngineInput } from './engine.types';

/**
 * The chat's author's note and the persona's position, against SillyTavern 1.18's own functions (named in
 * each case): authors-note.js `setFloatingPrompt`, world-info.js `checkWorldInfo`, script.js
 * `addPersonaDescriptionExtensionPrompt` / `getExtensionPrompt`, openai.js `preparePromptsForChatCompletion`
 * / `populateChatCompletion` (`injectToMain`) / `populationInjectionPrompts`. Expected prompts are derived by
 * hand from that source.
 */

type Preset = { prompts: Array<Record<string, unknown>>; prompt_order: unknown[]; [key: string]: unknown };

function preset(overrides: Record<string, unknown> = {}, order?: string[]): Preset {
  const identifiers = order ?? ['main', 'personaDescription', 'charDescription', 'chatHistory'];
  return {
    prompts: [
      { identifier: 'main', role: 'system', content: 'Main.', system_prompt: true },
      { identifier: 'personaDescription', marker: true, system_prompt: true },
      { identifier: 'charDescription', marker: true, system_prompt: true },
      { identifier: 'chatHistory', marker: true, system_prompt: true },
    ],
    prompt_order: [
      { character_id: 100001, order: identifiers.map((identifier) => ({ identifier, enabled: true })) },
    ],
    ...overrides,
  };
}

function input(overrides: Partial<PromptEngineInput> = {}): PromptEngineInput {
  return {
    seed: 'authors-note',
    now: Date.UTC(2026, 10, 27, 12, 0, 0),
    intent: 'normal',
    user: { name: 'Ann', description: null },
    character: { id: 'chr_1', data: { name: 'Bot', description: 'A bot.' } },
    preset: { data: preset() },
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

const note = (fields: Partial<AuthorsNote> = {}): AuthorsNote => ({
  prompt: 'NOTE',
  interval: 1,
  depth: 1,
  position: 'in_chat',
  role: 'system',
  ...fields,
});

const contents = (result: ReturnType<typeof buildPrompt>) => result.messages.map((m) => m.content);

/** The prompt of `input()` with no note text and no persona. */
const BASE = ['Main.', 'A bot.', '[Start a new Chat]', 'Hello.', 'Hi.', 'How are you?'];

/** A lorebook with constant entries at the note's top (position 2) and bottom (position 3). */
const anBook = (top = 'T', bottom = 'B'): PromptEngineInput['lorebooks'] => [
  {
    id: 'wb',
    name: 'wb',
    source: 'global',
    entries: [
      stEntry(1, { constant: true, position: 2, content: top }),
      stEntry(2, { constant: true, position: 3, content: bottom }),
    ],
  },
];

describe('author’s note: positions (ST extension_prompt_types of chat_metadata.note_position)', () => {
  it('in_chat: an extension prompt at note_depth with note_role (populationInjectionPrompts)', () => {
    const result = buildPrompt(input({ authors_note: note() }));
    expect(contents(result)).toEqual([
      'Main.',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Hi.',
      'NOTE',
      'How are you?',
    ]);
    expect(result.messages[5]).toEqual({ role: 'system', content: 'NOTE' });
    expect(result.runtime_trace.authors_note).toEqual({
      scheduled: true,
      applied: true,
      not_applied_reason: null,
      interval: 1,
      user_message_count: 2,
      position: 'in_chat',
      depth: 1,
      role: 'system',
      placed_as: 'in_chat',
      parts: ['note'],
      worldbook_entries_dropped: 0,
    });
    expect(result.assembly.in_chat_inserted_entry_ids).toContain('authors_note');
  });

  it('in_chat: depth 0 goes after the last message; the role is note_role', () => {
    const result = buildPrompt(input({ authors_note: note({ depth: 0, role: 'assistant' }) }));
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'NOTE' });
    const user = buildPrompt(input({ authors_note: note({ depth: 0, role: 'user' }) }));
    expect(user.messages.at(-1)).toEqual({ role: 'user', content: 'NOTE' });
  });

  it('after_scenario (IN_PROMPT): system prompt `authorsNote` at the end of main’s slot (getPromptPosition → end)', () => {
    const result = buildPrompt(input({ authors_note: note({ position: 'after_scenario' }) }));
    expect(contents(result)).toEqual([
      'Main.',
      'NOTE',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Hi.',
      'How are you?',
    ]);
    expect(result.runtime_trace.authors_note.placed_as).toBe('main');
    expect(result.runtime_trace.assembly.in_prompt_extensions).toEqual([
      { identifier: 'authorsNote', position: 'end', placed_as: 'main' },
    ]);
  });

  it('before_prompt (BEFORE_PROMPT): at the start of main’s slot, with note_role (getPromptRole)', () => {
    const result = buildPrompt(
      input({ authors_note: note({ position: 'before_prompt', role: 'assistant' }) }),
    );
    expect(result.messages.slice(0, 3)).toEqual([
      { role: 'assistant', content: 'NOTE' },
      { role: 'system', content: 'Main.' },
      { role: 'system', content: 'A bot.' },
    ]);
  });

  it('in prompt, after the summary: `end` ones follow main in call order, `start` ones go first (injectToMain)', () => {
    const end = buildPrompt(
      input({ memory_summary: 'MEM', authors_note: note({ position: 'after_scenario' }) }),
    );
    expect(contents(end).slice(0, 4)).toEqual(['Main.', 'MEM', 'NOTE', 'A bot.']);
    const start = buildPrompt(
      input({ memory_summary: 'MEM', authors_note: note({ position: 'before_prompt' }) }),
    );
    expect(contents(start).slice(0, 4)).toEqual(['NOTE', 'Main.', 'MEM', 'A bot.']);
    expect(start.assembly.memory_summary_injected).toBe(true);
  });

  it('an absolute main: the note becomes an injection beside main with main’s role, depth and order', () => {
    // ST `injectToMain` without `main` in the chat completion: `promptCopy` takes main's role/injection
    // settings and is spliced into `absolutePrompts` at indexOfMain (start) or indexOfMain + 1 (end); preset
    // prompts of one bucket are joined with '\n' by `populationInjectionPrompts`.
    const absolute = preset();
    absolute.prompts[0] = { ...absolute.prompts[0], injection_position: 1, injection_depth: 0 };
    const end = buildPrompt(
      input({ preset: { data: absolute }, authors_note: note({ position: 'after_scenario', role: 'user' }) }),
    );
    expect(end.messages.at(-1)).toEqual({ role: 'system', content: 'Main.\nNOTE' });
    expect(end.runtime_trace.authors_note.placed_as).toBe('main_injection');
    const start = buildPrompt(
      input({ preset: { data: absolute }, authors_note: note({ position: 'before_prompt' }) }),
    );
    expect(start.messages.at(-1)).toEqual({ role: 'system', content: 'NOTE\nMain.' });
    // Each `end` one is spliced right after main, so it lands before the summary placed earlier.
    const both = buildPrompt(
      input({
        preset: { data: absolute },
        memory_summary: 'MEM',
        authors_note: note({ position: 'after_scenario' }),
      }),
    );
    expect(both.messages.at(-1)).toEqual({ role: 'system', content: 'Main.\nNOTE\nMEM' });
  });

  it('an absolute main past MAX_INJECTION_DEPTH: its copies are never placed, and the trace says so', () => {
    // `populationInjectionPrompts` walks depths 0..10000 only: main at 10001 takes the note with it.
    const deep = preset();
    deep.prompts[0] = { ...deep.prompts[0], injection_position: 1, injection_depth: 10_001 };
    const result = buildPrompt(
      input({
        preset: { data: deep },
        memory_summary: 'MEM',
        authors_note: note({ position: 'after_scenario' }),
      }),
    );
    expect(contents(result)).not.toContain('NOTE');
    expect(contents(result).join('|')).not.toContain('MEM');
    expect(result.runtime_trace.authors_note).toMatchObject({
      scheduled: true,
      applied: false,
      not_applied_reason: 'depth_out_of_range',
      placed_as: null,
    });
    expect(result.assembly.memory_summary_injected).toBe(false);
    // At 10000 both are placed.
    deep.prompts[0] = { ...deep.prompts[0], injection_depth: 10_000 };
    const at = buildPrompt(
      input({
        preset: { data: deep },
        memory_summary: 'MEM',
        authors_note: note({ position: 'after_scenario' }),
      }),
    );
    expect(contents(at)).toContain('Main.\nNOTE\nMEM');
    expect(at.runtime_trace.authors_note).toMatchObject({ applied: true, placed_as: 'main_injection' });
    expect(at.assembly.memory_summary_injected).toBe(true);
  });

  it('no main prompt in the order: ST has nothing to insert beside, so the note is dropped', () => {
    const result = buildPrompt(
      input({
        preset: { data: preset({}, ['charDescription', 'chatHistory']) },
        authors_note: note({ position: 'after_scenario' }),
      }),
    );
    expect(contents(result)).not.toContain('NOTE');
    expect(result.runtime_trace.authors_note).toMatchObject({
      scheduled: true,
      applied: false,
      not_applied_reason: 'no_main_prompt',
      placed_as: null,
    });
    // In chat it does not need main.
    const inChat = buildPrompt(
      input({ preset: { data: preset({}, ['charDescription', 'chatHistory']) }, authors_note: note() }),
    );
    expect(contents(inChat)).toContain('NOTE');
  });

  it('trimming: getExtensionPrompt trims the in-chat text; the in-prompt text is sent as it is', () => {
    const inChat = buildPrompt(input({ authors_note: note({ prompt: '\n  NOTE  \n' }) }));
    expect(contents(inChat)).toContain('NOTE');
    const inPrompt = buildPrompt(
      input({ authors_note: note({ prompt: '  NOTE  ', position: 'after_scenario' }) }),
    );
    expect(contents(inPrompt)[1]).toBe('  NOTE  ');
  });
});

describe('author’s note: interval (ST setFloatingPrompt: `context.chat.filter(m => m.is_user).length`)', () => {
  it('the arithmetic: interval 1 always, <= 0 never, otherwise every interval-th user message', () => {
    expect(authorsNoteSchedule(1, 0, true)).toEqual({ scheduled: true, reason: null });
    expect(authorsNoteSchedule(0, 5, true)).toEqual({ scheduled: false, reason: 'interval_disabled' });
    expect(authorsNoteSchedule(-1, 5, true)).toEqual({ scheduled: false, reason: 'interval_disabled' });
    expect(authorsNoteSchedule(2, 0, true)).toEqual({ scheduled: false, reason: 'no_user_messages' });
    expect(authorsNoteSchedule(2, 1, true)).toEqual({ scheduled: false, reason: 'interval_not_reached' });
    expect(authorsNoteSchedule(2, 2, true)).toEqual({ scheduled: true, reason: null });
    expect(authorsNoteSchedule(2, 3, true)).toEqual({ scheduled: false, reason: 'interval_not_reached' });
    expect(authorsNoteSchedule(2, 4, true)).toEqual({ scheduled: true, reason: null });
    expect(authorsNoteSchedule(3, 2, true)).toEqual({ scheduled: false, reason: 'interval_not_reached' });
    expect(authorsNoteSchedule(Number.NaN, 2, true).scheduled).toBe(false);
    // setFloatingPrompt: "Not in a chat. Skipping." without a character.
    expect(authorsNoteSchedule(1, 3, false)).toEqual({ scheduled: false, reason: 'no_character' });
  });

  it('interval 1 inserts even with no user message in the chat', () => {
    const result = buildPrompt(
      input({
        intent: 'impersonate',
        user_input: null,
        history: [{ floor_no: 0, role: 'assistant', name: 'Bot', content: 'Hello.' }],
        authors_note: note({ depth: 0 }),
      }),
    );
    expect(result.runtime_trace.authors_note.user_message_count).toBe(0);
    expect(contents(result)).toContain('NOTE');
  });

  it('interval 0: never', () => {
    const result = buildPrompt(input({ authors_note: note({ interval: 0 }), lorebooks: anBook() }));
    expect(contents(result)).toEqual(BASE);
    expect(result.runtime_trace.authors_note).toMatchObject({
      scheduled: false,
      applied: false,
      not_applied_reason: 'interval_disabled',
      parts: [],
      worldbook_entries_dropped: 2,
    });
  });

  it('interval 2: the sent message counts (1 in the history + the input = 2 → in; 2 + 1 = 3 → out)', () => {
    const even = buildPrompt(input({ authors_note: note({ interval: 2 }) }));
    expect(even.runtime_trace.authors_note.user_message_count).toBe(2);
    expect(contents(even)).toContain('NOTE');
    const odd = buildPrompt(
      input({
        authors_note: note({ interval: 2 }),
        history: [
          { floor_no: 0, role: 'user', name: 'Ann', content: 'First.' },
          { floor_no: 1, role: 'assistant', name: 'Bot', content: 'Hello.' },
          { floor_no: 2, role: 'user', name: 'Ann', content: 'Hi.' },
        ],
      }),
    );
    expect(odd.runtime_trace.authors_note).toMatchObject({
      user_message_count: 3,
      scheduled: false,
      not_applied_reason: 'interval_not_reached',
    });
    expect(contents(odd)).not.toContain('NOTE');
  });

  it('no user message and an interval above 1: nothing', () => {
    const result = buildPrompt(
      input({
        intent: 'impersonate',
        user_input: null,
        history: [{ floor_no: 0, role: 'assistant', name: 'Bot', content: 'Hello.' }],
        authors_note: note({ interval: 2 }),
      }),
    );
    expect(result.runtime_trace.authors_note.not_applied_reason).toBe('no_user_messages');
    expect(contents(result)).not.toContain('NOTE');
  });

  it('hidden user messages count (hiding sets is_system, not is_user)', () => {
    const history: PromptEngineInput['history'] = [
      { floor_no: 0, role: 'user', name: 'Ann', content: 'Old.', is_hidden: true },
      { floor_no: 1, role: 'assistant', name: 'Bot', content: 'Hello.' },
      { floor_no: 2, role: 'user', name: 'Ann', content: 'Hi.' },
    ];
    const result = buildPrompt(input({ history, authors_note: note({ interval: 3 }) }));
    expect(result.runtime_trace.authors_note.user_message_count).toBe(3);
    expect(contents(result)).toContain('NOTE');
    expect(contents(result)).not.toContain('Old.');
  });

  it('continue, regenerate, swipe, impersonate and quiet send nothing: only the history counts', () => {
    // ST `Generate` sends a message only for a normal generation with text; impersonate and quiet text
    // never joins the chat; regenerate removes the last (assistant) reply and swipe keeps it: neither is
    // a user message.
    for (const [intent, user_input] of [
      ['continue', null],
      ['regenerate', null],
      ['swipe', null],
      ['impersonate', 'draft'],
      ['quiet', 'Summarise.'],
    ] as const) {
      const result = buildPrompt(input({ intent, user_input, authors_note: note({ interval: 2 }) }));
      expect([intent, result.runtime_trace.authors_note.user_message_count]).toEqual([intent, 1]);
      expect([intent, contents(result).includes('NOTE')]).toEqual([intent, false]);
    }
  });

  it('an empty normal input sends `send_if_empty`, which counts; without it nothing is sent', () => {
    const withFiller = buildPrompt(
      input({
        user_input: '',
        preset: { data: preset({ send_if_empty: 'Go on.' }) },
        authors_note: note({ interval: 2 }),
      }),
    );
    expect(withFiller.runtime_trace.authors_note.user_message_count).toBe(2);
    expect(contents(withFiller)).toContain('NOTE');
    const empty = buildPrompt(input({ user_input: '', authors_note: note({ interval: 2 }) }));
    expect(empty.runtime_trace.authors_note.user_message_count).toBe(1);
    expect(contents(empty)).not.toContain('NOTE');
  });

  it('no character: ST skips the note (and its lorebook entries) outside a character chat', () => {
    const result = buildPrompt(input({ character: null, authors_note: note(), lorebooks: anBook() }));
    expect(result.runtime_trace.authors_note).toMatchObject({
      scheduled: false,
      not_applied_reason: 'no_character',
      worldbook_entries_dropped: 2,
    });
    expect(contents(result)).not.toContain('NOTE');
  });
});

describe('author’s note: lorebook top/bottom entries (ST checkWorldInfo, only when shouldWIAddPrompt)', () => {
  it('are merged around the note: `${top}\\n${note}\\n${bottom}`', () => {
    const result = buildPrompt(input({ authors_note: note(), lorebooks: anBook() }));
    expect(contents(result)).toContain('T\nNOTE\nB');
    expect(result.runtime_trace.authors_note.parts).toEqual(['worldbook_top', 'note', 'worldbook_bottom']);
  });

  it('with no note text they still go in (top, blank line, bottom) at the note’s own place', () => {
    const result = buildPrompt(
      input({ authors_note: note({ prompt: '', position: 'after_scenario' }), lorebooks: anBook() }),
    );
    expect(contents(result).slice(0, 2)).toEqual(['Main.', 'T\n\nB']);
  });

  it('are left out on a turn the interval skips', () => {
    const result = buildPrompt(input({ authors_note: note({ interval: 3 }), lorebooks: anBook() }));
    expect(contents(result)).toEqual(BASE);
    expect(result.runtime_trace.authors_note.worldbook_entries_dropped).toBe(2);
  });

  it('an injection at `worldbook_author_note_top` follows the same rule', () => {
    const injection = {
      scope: 'request' as const,
      source_kind: 'client_injection' as const,
      title: 'Top',
      content: 'INJ',
      placement: 'worldbook_author_note_top',
    };
    const on = buildPrompt(
      input({ prompt_mode: 'compat_plus', authors_note: note(), injections: [injection] }),
    );
    expect(contents(on)).toContain('INJ\nNOTE');
    const off = buildPrompt(
      input({ prompt_mode: 'compat_plus', authors_note: note({ interval: 0 }), injections: [injection] }),
    );
    expect(contents(off)).not.toContain('INJ');
    expect(off.runtime_trace.injection.items[0]).toMatchObject({
      applied: false,
      not_applied_reason: 'prompt_section_absent',
    });
  });
});

describe('persona position (ST persona_description_positions, addPersonaDescriptionExtensionPrompt)', () => {
  const user = (fields: Partial<PromptEngineInput['user']> = {}): PromptEngineInput['user'] => ({
    name: 'Ann',
    description: 'Friend of {{char}}.',
    ...fields,
  });

  it('in_prompt (default): the personaDescription marker', () => {
    const result = buildPrompt(input({ user: user() }));
    expect(contents(result).slice(0, 3)).toEqual(['Main.', 'Friend of Bot.', 'A bot.']);
    expect(result.runtime_trace.persona).toEqual({
      position: 'in_prompt',
      source: 'default',
      depth: null,
      role: null,
      placed: true,
      not_placed_reason: null,
      scanned: false,
    });
  });

  it('in_prompt: the marker takes the raw description with one macro pass, not trimmed', () => {
    // ST openai.js `preparePromptsForChatCompletion`: `{ content: power_user.persona_description, identifier:
    // 'personaDescription' }`, then `preparePrompt` (substituteParams) — not getCharacterCardFields' copy.
    const result = buildPrompt(input({ user: user({ description: ' Friend of {{char}}.\n' }) }));
    expect(contents(result)[1]).toBe(' Friend of Bot.\n');
  });

  it('position wins over the older in_prompt flag; in_prompt false alone is none', () => {
    const flag = buildPrompt(input({ user: user({ in_prompt: false }) }));
    expect(contents(flag)).not.toContain('Friend of Bot.');
    expect(flag.runtime_trace.persona).toMatchObject({
      position: 'none',
      source: 'in_prompt',
      placed: false,
      not_placed_reason: 'position_none',
    });
    const both = buildPrompt(input({ user: user({ in_prompt: false, position: 'in_prompt' }) }));
    expect(contents(both)).toContain('Friend of Bot.');
    expect(both.runtime_trace.persona.source).toBe('position');
  });

  it('top_an / bottom_an: merged into the note, with the raw description, around the lorebook part', () => {
    const top = buildPrompt(
      input({ user: user({ position: 'top_an' }), authors_note: note(), lorebooks: anBook() }),
    );
    expect(contents(top)).toEqual([
      'Main.',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Hi.',
      'Friend of Bot.\nT\nNOTE\nB',
      'How are you?',
    ]);
    expect(top.runtime_trace.authors_note.parts).toEqual([
      'persona',
      'worldbook_top',
      'note',
      'worldbook_bottom',
    ]);
    expect(top.runtime_trace.persona).toMatchObject({ position: 'top_an', placed: true });
    const bottom = buildPrompt(input({ user: user({ position: 'bottom_an' }), authors_note: note() }));
    expect(contents(bottom)).toContain('NOTE\nFriend of Bot.');
  });

  it('top_an with an empty note: `${persona}\\n` — trimmed in chat, sent as it is in prompt', () => {
    const inChat = buildPrompt(
      input({ user: user({ position: 'top_an' }), authors_note: note({ prompt: '' }) }),
    );
    expect(contents(inChat)).toContain('Friend of Bot.');
    const inPrompt = buildPrompt(
      input({
        user: user({ position: 'top_an' }),
        authors_note: note({ prompt: '', position: 'after_scenario' }),
      }),
    );
    expect(contents(inPrompt)[1]).toBe('Friend of Bot.\n');
  });

  it('top_an on a turn without the note: the persona is nowhere', () => {
    const result = buildPrompt(
      input({ user: user({ position: 'top_an' }), authors_note: note({ interval: 0 }) }),
    );
    expect(contents(result).join('|')).not.toContain('Friend of Bot.');
    expect(result.runtime_trace.persona).toMatchObject({
      placed: false,
      not_placed_reason: 'authors_note_not_inserted',
    });
  });

  it('at_depth: extension prompt PERSONA_DESCRIPTION at depth 2, system, by default', () => {
    const result = buildPrompt(input({ user: user({ position: 'at_depth' }) }));
    expect(contents(result)).toEqual([
      'Main.',
      'A bot.',
      '[Start a new Chat]',
      'Hello.',
      'Friend of Bot.',
      'Hi.',
      'How are you?',
    ]);
    expect(result.runtime_trace.persona).toEqual({
      position: 'at_depth',
      source: 'position',
      depth: 2,
      role: 'system',
      placed: true,
      not_placed_reason: null,
      scanned: true,
    });
  });

  it('at_depth with the note, the character’s note and a lorebook entry at the same depth and role: one message in key order', () => {
    // ST `getExtensionPrompt` sorts the keys: '2_floating_prompt' < 'DEPTH_PROMPT' < 'PERSONA_DESCRIPTION'
    // < 'customDepthWI-2-0', and joins their trimmed values with '\n'.
    const result = buildPrompt(
      input({
        user: user({ position: 'at_depth', depth: 2 }),
        authors_note: note({ depth: 2 }),
        character: {
          id: 'chr_1',
          data: {
            name: 'Bot',
            description: 'A bot.',
            extensions: { depth_prompt: { prompt: 'CHARNOTE', depth: 2, role: 'system' } },
          },
        },
        lorebooks: [
          {
            id: 'wb',
            name: 'wb',
            source: 'global',
            entries: [stEntry(1, { constant: true, position: 4, depth: 2, role: 0, content: 'WI' })],
          },
        ],
      }),
    );
    expect(contents(result).slice(3)).toEqual([
      'Hello.',
      'NOTE\nCHARNOTE\nFriend of Bot.\nWI',
      'Hi.',
      'How are you?',
    ]);
  });

  it('at_depth with other roles: one message per role, assistant, user, then system nearest the end', () => {
    const result = buildPrompt(
      input({
        user: user({ position: 'at_depth', depth: 2, role: 'user' }),
        authors_note: note({ depth: 2, role: 'system' }),
        character: {
          id: 'chr_1',
          data: {
            name: 'Bot',
            description: 'A bot.',
            extensions: { depth_prompt: { prompt: 'CHARNOTE', depth: 2, role: 'assistant' } },
          },
        },
      }),
    );
    expect(result.messages.slice(3, 7)).toEqual([
      { role: 'assistant', content: 'Hello.' },
      { role: 'assistant', content: 'CHARNOTE' },
      { role: 'user', content: 'Friend of Bot.' },
      { role: 'system', content: 'NOTE' },
    ]);
  });

  it('at_depth is scanned by the lorebook (scan: true); the other positions only through matchPersonaDescription', () => {
    const lorebooks: PromptEngineInput['lorebooks'] = [
      {
        id: 'wb',
        name: 'wb',
        source: 'global',
        entries: [stEntry(1, { key: ['lantern'], content: 'LORE', position: 4, depth: 0 })],
      },
    ];
    const description = 'Carries a lantern.';
    const atDepth = buildPrompt(input({ user: user({ description, position: 'at_depth' }), lorebooks }));
    expect(contents(atDepth)).toContain('LORE');
    for (const position of ['in_prompt', 'top_an', 'none'] as const) {
      const other = buildPrompt(input({ user: user({ description, position }), lorebooks }));
      expect([position, contents(other).includes('LORE')]).toEqual([position, false]);
      expect(other.runtime_trace.persona.scanned).toBe(false);
    }
  });

  it('the personaDescription marker is filled only for in_prompt', () => {
    for (const position of ['none', 'at_depth', 'top_an', 'bottom_an'] as const) {
      const result = buildPrompt(input({ user: user({ position }), authors_note: note({ interval: 0 }) }));
      expect([position, contents(result).slice(0, 2)]).toEqual([position, ['Main.', 'A bot.']]);
    }
  });

  it('{{persona}} is the description whatever the position (getCharacterCardFields ignores it)', () => {
    const withMacro = preset();
    withMacro.prompts[0] = { ...withMacro.prompts[0], content: 'Main: {{persona}}' };
    for (const position of ['in_prompt', 'top_an', 'bottom_an', 'at_depth', 'none'] as const) {
      const result = buildPrompt(
        input({ preset: { data: withMacro }, user: user({ position }), authors_note: note({ interval: 0 }) }),
      );
      expect([position, result.messages[0].content]).toEqual([position, 'Main: Friend of Bot.']);
    }
  });

  it('at_depth: depth MAX_INJECTION_DEPTH (10000) is placed, 10001 is not', () => {
    const at = buildPrompt(input({ user: user({ position: 'at_depth', depth: 10000 }) }));
    expect(contents(at)).toContain('Friend of Bot.');
    const past = buildPrompt(input({ user: user({ position: 'at_depth', depth: 10001 }) }));
    expect(contents(past)).not.toContain('Friend of Bot.');
    expect(past.runtime_trace.persona).toMatchObject({
      placed: false,
      not_placed_reason: 'depth_out_of_range',
    });
  });

  it('an empty description places nothing anywhere', () => {
    const result = buildPrompt(input({ user: user({ description: '', position: 'at_depth' }) }));
    expect(result.runtime_trace.persona).toMatchObject({
      placed: false,
      not_placed_reason: 'empty_description',
      scanned: false,
    });
  });
});

describe('author’s note: macros (one pass where ST makes it)', () => {
  it('the note is expanded in chat (getExtensionPrompt) and in prompt (preparePrompt)', () => {
    const inChat = buildPrompt(input({ authors_note: note({ prompt: '{{user}} meets {{char}}.' }) }));
    expect(contents(inChat)).toContain('Ann meets Bot.');
    const inPrompt = buildPrompt(
      input({ authors_note: note({ prompt: '<USER> meets {{char}}.', position: 'before_prompt' }) }),
    );
    expect(contents(inPrompt)[0]).toBe('Ann meets Bot.');
  });

  it('exactly once: a variable write in the note runs one time', () => {
    const result = buildPrompt(input({ authors_note: note({ prompt: '{{addvar::n::1}}n={{getvar::n}}' }) }));
    expect(contents(result)).toContain('n=1');
    expect(result.runtime_trace.macro.staged_mutations.filter((m) => m.key === 'n')).toHaveLength(1);
  });

  it('in chat, one pass over the joined text of a depth and role (getExtensionPrompt joins, then substituteParams)', () => {
    const withCharNote = (prompt: string, depthPrompt: string | null) =>
      input({
        macro_engine: 'v2',
        authors_note: note({ prompt, depth: 1 }),
        character: {
          id: 'chr_1',
          data: {
            name: 'Bot',
            description: 'A bot.',
            extensions: depthPrompt
              ? { depth_prompt: { prompt: depthPrompt, depth: 1, role: 'system' } }
              : {},
          },
        },
      });
    // {{pick}} is seeded by the text it is expanded in and its offset there: the note and the character's
    // note at one depth and role are one text, as if the note alone held both.
    const pick = `{{pick::${Array.from({ length: 40 }, (_, i) => `p${i}`).join(',')}}}`;
    const joined = contents(buildPrompt(withCharNote(pick, 'CHARNOTE')))[5];
    const single = contents(buildPrompt(withCharNote(`${pick}\nCHARNOTE`, null)))[5];
    expect(joined).toBe(single);
    expect(joined).toMatch(/^p\d+\nCHARNOTE$/);
    // A scoped macro may open in one part and close in the next.
    const scoped = buildPrompt(withCharNote('{{if::1}}IN', 'NOTE{{/if}}'));
    expect(contents(scoped).slice(4)).toEqual(['Hi.', 'IN\nNOTE', 'How are you?']);
  });

  it('{{authorsNote}} is the note as written; {{charAuthorsNote}} and {{defaultAuthorsNote}} are empty', () => {
    const withMacro = preset();
    withMacro.prompts[0] = {
      ...withMacro.prompts[0],
      content: 'Main [{{authorsNote}}][{{charAuthorsNote}}][{{defaultAuthorsNote}}]',
    };
    const result = buildPrompt(
      input({ preset: { data: withMacro }, authors_note: note({ prompt: 'Hi {{user}}', interval: 0 }) }),
    );
    expect(result.messages[0].content).toBe('Main [Hi {{user}}][][]');
    const none = buildPrompt(input({ preset: { data: withMacro } }));
    expect(none.messages[0].content).toBe('Main [][][]');
  });
});

describe('author’s note: generation types (where depth counts from)', () => {
  it('continue with continue_prefill: the continued message is taken out before the note is placed', () => {
    const result = buildPrompt(
      input({
        intent: 'continue',
        user_input: null,
        preset: { data: preset({ continue_prefill: true }) },
        history: [
          { floor_no: 0, role: 'assistant', name: 'Bot', content: 'Hello.' },
          { floor_no: 1, role: 'user', name: 'Ann', content: 'Hi.' },
          { floor_no: 2, role: 'assistant', name: 'Bot', content: 'Partial' },
        ],
        authors_note: note({ depth: 1 }),
      }),
    );
    expect(contents(result).slice(3)).toEqual(['Hello.', 'NOTE', 'Hi.', 'Partial']);
  });

  it('impersonate: the note is in the history, the impersonation prompt stays last', () => {
    const result = buildPrompt(
      input({ intent: 'impersonate', user_input: 'draft', authors_note: note({ depth: 0 }) }),
    );
    const texts = contents(result);
    expect(texts.slice(-3, -1)).toEqual(['Hi.', 'NOTE']);
    expect(texts.at(-1)).toMatch(/^\[Write your next reply from the point of view of Ann/);
  });

  it('quiet: the note is in the history, the quiet prompt stays last', () => {
    const result = buildPrompt(
      input({ intent: 'quiet', user_input: 'Summarise.', authors_note: note({ depth: 0 }) }),
    );
    expect(contents(result).slice(-3)).toEqual(['Hi.', 'NOTE', 'Summarise.']);
  });
});

describe('author’s note: limits and defaults', () => {
  it('no note: the defaults (empty, every message, depth 4, in chat, system) change nothing', () => {
    const result = buildPrompt(input());
    expect(contents(result)).toEqual(BASE);
    expect(result.runtime_trace.authors_note).toEqual({
      scheduled: true,
      applied: false,
      not_applied_reason: 'empty',
      interval: 1,
      user_message_count: 2,
      position: 'in_chat',
      depth: 4,
      role: 'system',
      placed_as: null,
      parts: [],
      worldbook_entries_dropped: 0,
    });
  });

  it('in_chat depth MAX_INJECTION_DEPTH (10000) is placed (before the whole history), 10001 is not', () => {
    const at = buildPrompt(input({ authors_note: note({ depth: 10000 }) }));
    expect(contents(at).slice(2, 4)).toEqual(['[Start a new Chat]', 'NOTE']);
    const past = buildPrompt(input({ authors_note: note({ depth: 10001 }) }));
    expect(contents(past)).not.toContain('NOTE');
    expect(past.runtime_trace.authors_note).toMatchObject({
      scheduled: true,
      applied: false,
      not_applied_reason: 'depth_out_of_range',
    });
    const fraction = buildPrompt(input({ authors_note: note({ depth: 1.5 }) }));
    expect(fraction.runtime_trace.authors_note.not_applied_reason).toBe('depth_out_of_range');
  });

  it('an unusable field falls back to ST’s default with a warning', () => {
    const result = buildPrompt(
      input({ authors_note: { ...note(), role: 'narrator' as never, interval: Number.NaN } }),
    );
    expect(result.warnings.map((w) => w.code)).toEqual(['invalid_authors_note', 'invalid_authors_note']);
    expect(result.runtime_trace.authors_note).toMatchObject({ role: 'system', interval: 1, applied: true });
  });

  it('mergeAuthorsNote removes one leading and one trailing newline of the lorebook merge only', () => {
    expect(mergeAuthorsNote({ note: '', worldbookTop: '', worldbookBottom: '', persona: null }).text).toBe(
      '',
    );
    expect(mergeAuthorsNote({ note: 'N', worldbookTop: '', worldbookBottom: '', persona: null }).text).toBe(
      'N',
    );
    expect(
      mergeAuthorsNote({ note: '\nN\n', worldbookTop: 'T', worldbookBottom: '', persona: null }).text,
    ).toBe('T\n\nN\n');
    expect(
      mergeAuthorsNote({
        note: '',
        worldbookTop: '',
        worldbookBottom: '',
        persona: { text: 'P', side: 'bottom' },
      }).text,
    ).toBe('\nP');
  });
});
