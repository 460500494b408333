import {
  parsePostProcessingMode,
  postProcessPrompt,
  POST_PROCESSING_MODES,
  ST_PROMPT_PLACEHOLDER,
  type PostProcessingMode,
  type PostProcessMessage,
} from './post-processing';

/**
 * Table tests for ST `src/prompt-converters.js` `postProcessPrompt` / `mergeMessages` (each expected value
 * is what that function returns for the input, worked through by hand from its source).
 */
const names = { charName: 'Seraphina', userName: 'User' };
const P = ST_PROMPT_PLACEHOLDER;

/** A typical assembled prompt: main, examples, history with a mid-chat system note, jailbreak. */
const PROMPT: PostProcessMessage[] = [
  { role: 'system', content: 'Main prompt.' },
  { role: 'system', content: 'Char description.' },
  { role: 'system', content: '[Example Chat]' },
  { role: 'system', content: 'Hello there.', name: 'example_user' },
  { role: 'system', content: 'Greetings, traveller.', name: 'example_assistant' },
  { role: 'system', content: '[Start a new Chat]' },
  { role: 'assistant', content: 'Welcome to the glade.' },
  { role: 'user', content: 'Where am I?' },
  { role: 'system', content: 'Post-history instructions.' },
];

describe('postProcessPrompt (ST mergeMessages)', () => {
  const cases: Array<{
    name: string;
    mode: PostProcessingMode;
    input: PostProcessMessage[];
    expected: PostProcessMessage[];
    merged: number;
    placeholder: boolean;
    systemToUser?: number;
  }> = [
    {
      name: 'none: unchanged, names kept (ST default `` returns the messages as they are)',
      mode: 'none',
      input: PROMPT,
      expected: PROMPT,
      merged: 0,
      placeholder: false,
    },
    {
      name: 'merge: example names become prefixes, same-role runs join with a blank line',
      mode: 'merge',
      input: PROMPT,
      expected: [
        {
          role: 'system',
          content:
            'Main prompt.\n\nChar description.\n\n[Example Chat]\n\nUser: Hello there.\n\nSeraphina: Greetings, traveller.\n\n[Start a new Chat]',
        },
        { role: 'assistant', content: 'Welcome to the glade.' },
        { role: 'user', content: 'Where am I?' },
        { role: 'system', content: 'Post-history instructions.' },
      ],
      merged: 5,
      placeholder: false,
    },
    {
      name: 'semi: the later system message becomes user and merges into the user turn; no placeholder',
      mode: 'semi',
      input: PROMPT,
      expected: [
        {
          role: 'system',
          content:
            'Main prompt.\n\nChar description.\n\n[Example Chat]\n\nUser: Hello there.\n\nSeraphina: Greetings, traveller.\n\n[Start a new Chat]',
        },
        { role: 'assistant', content: 'Welcome to the glade.' },
        { role: 'user', content: 'Where am I?\n\nPost-history instructions.' },
      ],
      merged: 6,
      placeholder: false,
      systemToUser: 1,
    },
    {
      name: 'strict: as semi, plus a placeholder user message after the system block when none follows',
      mode: 'strict',
      input: PROMPT,
      expected: [
        {
          role: 'system',
          content:
            'Main prompt.\n\nChar description.\n\n[Example Chat]\n\nUser: Hello there.\n\nSeraphina: Greetings, traveller.\n\n[Start a new Chat]',
        },
        { role: 'user', content: P },
        { role: 'assistant', content: 'Welcome to the glade.' },
        { role: 'user', content: 'Where am I?\n\nPost-history instructions.' },
      ],
      merged: 6,
      placeholder: true,
      systemToUser: 1,
    },
    {
      name: 'strict: a system block already followed by a user message gets no placeholder',
      mode: 'strict',
      input: [
        { role: 'system', content: 'Main.' },
        { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: 'Hello.' },
      ],
      expected: [
        { role: 'system', content: 'Main.' },
        { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: 'Hello.' },
      ],
      merged: 0,
      placeholder: false,
    },
    {
      name: 'strict: a prompt starting with assistant gets the placeholder first',
      mode: 'strict',
      input: [
        { role: 'assistant', content: 'Greeting.' },
        { role: 'user', content: 'Hi.' },
      ],
      expected: [
        { role: 'user', content: P },
        { role: 'assistant', content: 'Greeting.' },
        { role: 'user', content: 'Hi.' },
      ],
      merged: 0,
      placeholder: true,
    },
    {
      name: 'strict: a lone system message gets the placeholder after it',
      mode: 'strict',
      input: [{ role: 'system', content: 'Only system.' }],
      expected: [
        { role: 'system', content: 'Only system.' },
        { role: 'user', content: P },
      ],
      merged: 0,
      placeholder: true,
    },
    {
      name: 'strict: system after user turns into user and merges with it (second pass)',
      mode: 'strict',
      input: [
        { role: 'user', content: 'A' },
        { role: 'system', content: 'B' },
        { role: 'user', content: 'C' },
      ],
      expected: [{ role: 'user', content: 'A\n\nB\n\nC' }],
      merged: 2,
      placeholder: false,
      systemToUser: 1,
    },
    {
      name: 'semi: a prompt starting with assistant gets no placeholder',
      mode: 'semi',
      input: [
        { role: 'assistant', content: 'Greeting.' },
        { role: 'system', content: 'Note.' },
      ],
      expected: [
        { role: 'assistant', content: 'Greeting.' },
        { role: 'user', content: 'Note.' },
      ],
      merged: 0,
      placeholder: false,
      systemToUser: 1,
    },
    {
      name: 'single: one user message, speakers prefixed, examples named, system text unprefixed',
      mode: 'single',
      input: [
        { role: 'system', content: 'Main.' },
        { role: 'system', content: 'Hey.', name: 'example_user' },
        { role: 'assistant', content: 'Welcome.' },
        { role: 'user', content: 'Where?' },
      ],
      expected: [{ role: 'user', content: 'Main.\n\nUser: Hey.\n\nSeraphina: Welcome.\n\nUser: Where?' }],
      merged: 3,
      placeholder: false,
      systemToUser: 2,
    },
    {
      name: 'merge: a completion name (names_behavior 1) becomes a prefix once; an existing prefix is kept',
      mode: 'merge',
      input: [
        { role: 'user', content: 'Hi.', name: 'User' },
        { role: 'assistant', content: 'Seraphina: Hello.', name: 'Seraphina' },
      ],
      expected: [
        { role: 'user', content: 'User: Hi.' },
        { role: 'assistant', content: 'Seraphina: Hello.' },
      ],
      merged: 0,
      placeholder: false,
    },
    {
      name: 'merge: an empty message is not joined (ST joins only a message with content)',
      mode: 'merge',
      input: [
        { role: 'user', content: 'A' },
        { role: 'user', content: '' },
        { role: 'user', content: 'B' },
      ],
      expected: [
        { role: 'user', content: 'A' },
        { role: 'user', content: '\n\nB' },
      ],
      merged: 1,
      placeholder: false,
    },
    {
      name: 'merge: an empty prompt becomes the placeholder user message',
      mode: 'merge',
      input: [],
      expected: [{ role: 'user', content: P }],
      merged: 0,
      placeholder: true,
    },
    {
      name: 'merge_tools behaves as merge (no tool messages in Hearth prompts)',
      mode: 'merge_tools',
      input: [
        { role: 'system', content: 'A' },
        { role: 'system', content: 'B' },
      ],
      expected: [{ role: 'system', content: 'A\n\nB' }],
      merged: 1,
      placeholder: false,
    },
    {
      name: 'strict_tools behaves as strict',
      mode: 'strict_tools',
      input: [{ role: 'assistant', content: 'X' }],
      expected: [
        { role: 'user', content: P },
        { role: 'assistant', content: 'X' },
      ],
      merged: 0,
      placeholder: true,
    },
    {
      name: 'semi_tools behaves as semi',
      mode: 'semi_tools',
      input: [
        { role: 'system', content: 'S' },
        { role: 'assistant', content: 'A' },
        { role: 'system', content: 'T' },
      ],
      expected: [
        { role: 'system', content: 'S' },
        { role: 'assistant', content: 'A' },
        { role: 'user', content: 'T' },
      ],
      merged: 0,
      placeholder: false,
      systemToUser: 1,
    },
  ];

  it.each(cases)('$name', ({ mode, input, expected, merged, placeholder, systemToUser }) => {
    const before = JSON.stringify(input);
    const result = postProcessPrompt(input, mode, names);
    expect(result.messages).toEqual(expected);
    expect(result.trace).toEqual({
      mode,
      merged_count: merged,
      placeholder_inserted: placeholder,
      system_to_user_count: systemToUser ?? 0,
    });
    // The caller's messages are never mutated.
    expect(JSON.stringify(input)).toBe(before);
  });

  it('a group member prefix is not doubled on example_assistant (ST startsWithGroupName)', () => {
    const result = postProcessPrompt(
      [{ role: 'system', content: 'Ann: hi', name: 'example_assistant' }],
      'merge',
      { ...names, groupNames: ['Ann'] },
    );
    expect(result.messages).toEqual([{ role: 'system', content: 'Ann: hi' }]);
  });

  it('without names (empty char/user name) examples stay unprefixed', () => {
    const result = postProcessPrompt(
      [
        { role: 'system', content: 'hi', name: 'example_user' },
        { role: 'system', content: 'yo', name: 'example_assistant' },
      ],
      'merge',
      { charName: '', userName: '' },
    );
    expect(result.messages).toEqual([{ role: 'system', content: 'hi\n\nyo' }]);
  });

  it('the placeholder text can be given (ST config `promptPlaceholder`)', () => {
    const result = postProcessPrompt([{ role: 'assistant', content: 'X' }], 'strict', names, "Let's go.");
    expect(result.messages[0]).toEqual({ role: 'user', content: "Let's go." });
  });

  it('the result never has two neighbours of one role after semi/strict (property over role sequences)', () => {
    const roles = ['system', 'user', 'assistant'] as const;
    for (let n = 0; n < 6; n++) {
      const total = 3 ** n;
      for (let code = 0; code < total; code++) {
        const input: PostProcessMessage[] = [];
        let c = code;
        for (let i = 0; i < n; i++) {
          input.push({ role: roles[c % 3], content: `m${i}` });
          c = Math.floor(c / 3);
        }
        for (const mode of ['semi', 'strict'] as const) {
          const out = postProcessPrompt(input, mode, names).messages;
          for (let i = 1; i < out.length; i++) {
            expect(out[i].role === out[i - 1].role).toBe(false);
            expect(out[i].role).not.toBe('system');
          }
          if (mode === 'strict') expect(['system', 'user']).toContain(out[0].role);
          if (mode === 'strict' && out[0].role === 'system' && out.length > 1)
            expect(out[1].role).toBe('user');
        }
      }
    }
  });

  it('parsePostProcessingMode accepts ST values (`` = none, deprecated claude = merge) and refuses others', () => {
    expect(parsePostProcessingMode('')).toBe('none');
    expect(parsePostProcessingMode(undefined)).toBe('none');
    expect(parsePostProcessingMode('claude')).toBe('merge');
    for (const m of POST_PROCESSING_MODES) expect(parsePostProcessingMode(m)).toBe(m);
    expect(parsePostProcessingMode('STRICT')).toBeNull();
    expect(parsePostProcessingMode(3)).toBeNull();
  });
});
