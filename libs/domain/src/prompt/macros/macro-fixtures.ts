import type { MacroContext } from './types';

/** Sat Nov 21 2026 21:19:48.123 UTC. */
export const NOW = Date.UTC(2026, 10, 21, 21, 19, 48, 123);

/** A context covering every macro family; tests spread it and override what they need. */
export function baseContext(overrides: Partial<MacroContext> = {}): MacroContext {
  return {
    now: NOW,
    seed: 'turn-seed',
    user: 'Alice',
    char: 'Seraphina',
    persona: 'A traveler called {{user}}.',
    character: {
      name: 'Seraphina',
      description: '  {{char}} guards {{user}}.  ',
      personality: 'kind',
      scenario: 'forest',
      systemPrompt: 'SYS',
      postHistoryInstructions: 'PHI',
      mesExamples: '<START>\n{{user}}: hi\n{{char}}: hello',
      version: '1.2',
      depthPrompt: 'DEPTH',
      creatorNotes: 'notes',
      firstMessage: 'Greetings',
      alternateGreetings: [' Alt one ', 'Alt two'],
    },
    model: 'gpt-4o',
    input: 'typed text',
    chat: [
      { mes: 'Greetings', is_user: false, swipes: ['Greetings', 'Alt'], swipe_id: 0 },
      { mes: 'Hello there', is_user: true, send_date: NOW - 3 * 3600_000 },
      { mes: 'hidden note', is_user: true, is_system: true },
      { mes: 'Reply', is_user: false, swipes: ['Reply', 'Reply 2', 'Reply 3'], swipe_id: 1 },
    ],
    firstIncludedMessageId: 1,
    firstDisplayedMessageId: 0,
    limits: { maxPrompt: 8000, maxContext: 8192, maxResponse: 300 },
    variables: {
      local: { x: 4, y: '5', obj: { a: { b: 2 } }, list: '[1,2]', flag: 'off', json: '{"k":{"v":"w"}}' },
      global: { g: 10 },
    },
    outlets: { lore: 'Outlet text' },
    generationType: 'normal',
    chatIdHash: 6301625224434831,
    ...overrides,
  };
}
