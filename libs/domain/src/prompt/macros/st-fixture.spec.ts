import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandMacros } from './session';
import type { MacroChatMessage, MacroContext, MacroEngineKind } from './types';

/**
 * Checks against a chat file SillyTavern 1.18.0 wrote itself (shared/fixtures/chats/SOURCES.md): its
 * greeting swipes keep macros unexpanded while `mes` holds what ST expanded, and its header carries the
 * variables `{{setvar}}`/`{{incvar}}` produced and the `chat_id_hash` `{{pick}}` seeds with.
 */
const lines = readFileSync(
  join(__dirname, '../../formats/__fixtures__/chats/MacroMage.swipes.st-1.18.0.jsonl'),
  'utf8',
)
  .split('\n')
  .map((line) => JSON.parse(line) as Record<string, unknown>);
const header = lines[0].chat_metadata as { variables: Record<string, unknown>; chat_id_hash: number };
const messages = lines.slice(1) as unknown as (MacroChatMessage & { swipes?: string[]; send_date: string })[];

function context(engine: MacroEngineKind): MacroContext {
  return {
    engine,
    user: 'User',
    char: 'Macro Mage',
    now: Date.parse(messages[messages.length - 1].send_date),
    seed: 'fixture',
    chatIdHash: header.chat_id_hash,
    variables: { local: header.variables, global: {} },
    chat: messages,
  };
}

describe.each<MacroEngineKind>(['v2', 'classic'])('SillyTavern 1.18.0 chat file, %s engine', (engine) => {
  it('expands the stored greeting template to the greeting ST stored (§j "Swipes")', () => {
    const greeting = messages[0];
    expect(expandMacros(greeting.swipes![0], context(engine)).text).toBe(greeting.mes);
  });

  it('reads the variables ST stored (x is a number from incvar, y the string "5")', () => {
    expect(expandMacros('{{getvar::trick}} {{getvar::x}} {{getvar::y}}', context(engine)).text).toBe(
      'dove 4 5',
    );
    const result = expandMacros(
      '{{addvar::x::1}}{{addvar::y::1}}{{getvar::x}}/{{getvar::y}}',
      context(engine),
    );
    expect(result.text).toBe('5/6');
    expect(result.mutation_preview.local).toEqual({ x: 5, y: 6 });
  });

  it('chat macros read the active swipe and swipe counts of the last message', () => {
    const last = messages[messages.length - 1];
    const text =
      '{{lastMessage}}|{{lastUserMessage}}|{{lastCharMessage}}|{{lastMessageId}}|{{lastSwipeId}}|{{currentSwipeId}}';
    expect(expandMacros(text, context(engine)).text).toBe(
      [
        last.mes,
        messages[1].mes,
        last.mes,
        String(messages.length - 1),
        String(last.swipes!.length),
        String(last.swipe_id! + 1),
      ].join('|'),
    );
  });

  it('{{idle_duration}} measures from the last user message before the latest reply', () => {
    expect(expandMacros('{{idle_duration}}', context(engine)).text).toBe('a few seconds');
  });
});

/** shared/fixtures/golden-example: a request SillyTavern 1.18.0 assembled itself, with its inputs. */
describe.each<MacroEngineKind>(['v2', 'classic'])(
  'SillyTavern 1.18.0 golden request, %s engine',
  (engine) => {
    const dir = join(__dirname, '../__fixtures__/golden-example/a-default-seraphina-first-message');
    const preset = JSON.parse(
      readFileSync(join(dir, 'inputs/preset/openai_Default.st-1.18.0.json'), 'utf8'),
    ) as {
      prompts: { identifier: string; content?: string }[];
    };
    const card = JSON.parse(
      readFileSync(join(dir, 'inputs/card/default_Seraphina.st-export.json'), 'utf8'),
    ) as {
      data: { first_mes: string };
    };
    const request = JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8')) as {
      messages: { content: string }[];
    };
    const ctx: MacroContext = { engine, user: 'User', char: 'Seraphina', now: 0, seed: 'golden' };

    it('the main prompt expands to the first message ST sent', () => {
      const main = preset.prompts.find((p) => p.identifier === 'main')!.content!;
      expect(expandMacros(main, ctx).text).toBe(request.messages[0].content);
    });

    it('the greeting expands to the assistant message ST sent', () => {
      expect(expandMacros(card.data.first_mes, ctx).text.trim()).toBe(request.messages[4].content);
    });
  },
);
