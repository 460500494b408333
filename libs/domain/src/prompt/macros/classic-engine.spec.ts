import { baseContext } from './macro-fixtures';
import { expandMacros, MacroSession } from './session';
import { getStringHash, seedrandom } from './st-compat';
import type { MacroContext } from './types';

const classic = (text: string, overrides: Partial<MacroContext> = {}, original?: string) =>
  expandMacros(
    text,
    baseContext({ engine: 'classic', ...overrides }),
    original === undefined ? {} : { original },
  );

describe('classic engine: macro table (reference §g, ST 1.18 macros.js evaluateMacros)', () => {
  it.each([
    [
      '§g1 angle tags',
      '<USER>/<BOT>/<CHAR>/<GROUP>/<CHARIFNOTGROUP>',
      'Alice/Seraphina/Seraphina/Seraphina/Seraphina',
    ],
    ['§g1 angle tags run even without {{', '<user> and <bot>', 'Alice and Seraphina'],
    ['§g6 {{user}} {{char}} case-insensitive', '{{USER}} {{char}}', 'Alice Seraphina'],
    ['§g6 {{description}} (card fields before names)', '{{description}}', 'Seraphina guards Alice.'],
    [
      '§g6 {{personality}} {{scenario}} {{persona}}',
      '{{personality}}|{{scenario}}|{{persona}}',
      'kind|forest|A traveler called Alice.',
    ],
    [
      '§g6 {{charPrompt}} {{charInstruction}} {{charJailbreak}}',
      '{{charPrompt}} {{charInstruction}} {{charJailbreak}}',
      'SYS PHI PHI',
    ],
    [
      '§g6 {{mesExamples}} {{mesExamplesRaw}}',
      '{{mesExamples}}|{{mesExamplesRaw}}',
      '<START>\nAlice: hi\nSeraphina: hello\n|<START>\nAlice: hi\nSeraphina: hello',
    ],
    ['§g6 {{charVersion}} {{char_version}}', '{{charVersion}} {{char_version}}', '1.2 1.2'],
    ['§g6 {{charDepthPrompt}} {{creatorNotes}}', '{{charDepthPrompt}} {{creatorNotes}}', 'DEPTH notes'],
    [
      '§g6 {{group}} {{groupNotMuted}} {{notChar}} solo',
      '{{group}}|{{charIfNotGroup}}|{{groupNotMuted}}|{{notChar}}',
      'Seraphina|Seraphina|Seraphina|Alice',
    ],
    ['§g6 {{model}}', '{{model}}', 'gpt-4o'],
    ['§g5 {{newline}} {{noop}} {{input}}', 'a{{newline}}b{{noop}}c {{input}}', 'a\nbc typed text'],
    ['§g5 {{trim}}', 'a\r\n\n{{trim}}\nb', 'ab'],
    [
      '§g7 limits',
      '{{maxPrompt}} {{maxPromptTokens}} {{maxContext}} {{maxContextTokens}} {{maxResponse}} {{maxResponseTokens}}',
      '8000 8000 8192 8192 300 300',
    ],
    [
      '§g7 chat macros',
      '{{lastMessage}}|{{lastMessageId}}|{{lastUserMessage}}|{{lastCharMessage}}',
      'Reply|3|Hello there|Reply',
    ],
    [
      '§g7 swipe and range macros',
      '{{lastSwipeId}} {{currentSwipeId}} {{allChatRange}} {{firstIncludedMessageId}} {{firstDisplayedMessageId}}',
      '3 2 0-3 1 0',
    ],
    ['§g7 {{reverse:text}}', '{{reverse:abc}}', 'cba'],
    ['§g7 {{reverse::text}} keeps the second colon (regex /{{reverse:(.+?)}}/)', '{{reverse::abc}}', 'cba:'],
    ['§g7 {{// comment}} (multi-line)', 'a{{// one\ntwo }}b', 'ab'],
    [
      '§g7 time macros',
      '{{time}}|{{date}}|{{weekday}}|{{isotime}}|{{isodate}}',
      '9:19 PM|November 21, 2026|Saturday|21:19|2026-11-21',
    ],
    ['§g7 {{datetimeformat <fmt>}}', '{{datetimeformat YYYY/MM/DD hh:mm A}}', '2026/11/21 09:19 PM'],
    ['§g7 {{time_UTC±N}}', '{{time_UTC-5}} {{time_UTC+9}}', '4:19 PM 6:19 AM'],
    ['§g7 {{idle_duration}}', '{{idle_duration}}', '3 hours'],
    [
      '§g7 {{timeDiff::a::b}} (humanize without suffix)',
      '{{timeDiff::2023-01-01 12:00:00::2023-01-01 15:00:00}}',
      '3 hours',
    ],
    [
      '§g7 {{outlet::name}}',
      '[{{outlet::lore}}][{{outlet:: lore }}][{{outlet::nope}}]',
      '[Outlet text][Outlet text][]',
    ],
    ['§g7 {{banned "word"}}', 'a{{banned "delve"}}b', 'ab'],
    ['§g unknown macros are left as is', '{{foo}} {{bar::x}}', '{{foo}} {{bar::x}}'],
    [
      '§g3 instruct macros are empty without instruct mode',
      '[{{instructInput}}{{instructUserPrefix}}{{chatSeparator}}]',
      '[]',
    ],
    ['new-engine-only macros stay as text', '{{.x}} {{space}} {{greeting}}', '{{.x}} {{space}} {{greeting}}'],
    ['{{lastGenerationType}} {{isMobile}}', '{{lastGenerationType}} {{isMobile}}', 'normal false'],
  ])('%s', (_rule, input, expected) => {
    expect(classic(input).text).toBe(expected);
  });

  it.each([
    [
      '§g4 setvar then getvar (variables run before everything but roll)',
      '{{setvar::a::1}}{{getvar::a}}',
      '1',
    ],
    ['§g4 addvar numeric / string', '{{addvar::x::2}}{{addvar::y::z}}{{getvar::x}} {{getvar::y}}', '6 5z'],
    ['§g4 addvar appends to a JSON array', '{{addvar::list::3}}{{getvar::list}}', '[1,2,"3"]'],
    ['§g4 incvar / decvar return the new value', '{{incvar::x}} {{decvar::n}}', '5 -1'],
    ['§g4 getvar of a number keeps it a number', '{{getvar::x}}', '4'],
    ['§g4 names are trimmed', '{{setvar:: spaced ::v}}{{getvar::spaced}}', 'v'],
    ['§g4 setvar values keep their spaces', '{{setvar::s:: v }}[{{getvar::s}}]', '[ v ]'],
    ['§g4 setvar values cannot contain }', '{{setvar::a::x}y}}', '{{setvar::a::x}y}}'],
    ['§g4 names cannot contain :', '{{setvar::a:b::1}}', '{{setvar::a:b::1}}'],
    [
      '§g4 global variables',
      '{{setglobalvar::h::2}}{{addglobalvar::h::3}}{{incglobalvar::g}}{{decglobalvar::g}} {{getglobalvar::h}} {{getglobalvar::g}}',
      '1110 5 10',
    ],
    ['path access into JSON values', '{{getvar::obj.a.b}} {{getvar::json.k.v}}', '2 w'],
    [
      '§g4 no nesting: the value regex stops at the first }, so a macro inside a setvar value breaks it',
      '{{setvar::who::{{user}}}}{{getvar::who}}',
      '}}{{user',
    ],
  ])('%s', (_rule, input, expected) => {
    expect(classic(input).text).toBe(expected);
  });

  it('§g order: getvar runs before {{user}}, so a variable holding {{user}} is expanded by the later env pass', () => {
    expect(classic('{{getvar::t}}', { variables: { local: { t: 'Hi {{user}}' } } }).text).toBe('Hi Alice');
  });

  it('§g order: {{user}} inside a value produced by {{description}} resolves, not the reverse', () => {
    const ctx = {
      character: { description: 'D', fieldsExpanded: true },
      dynamicMacros: { late: '{{description}}' },
    };
    expect(classic('{{late}}', ctx).text).toBe('{{description}}');
    expect(
      classic('{{description}}', { character: { description: 'by {{user}}', fieldsExpanded: true } }).text,
    ).toBe('by Alice');
  });

  it('§g "A step is skipped once the text no longer contains {{"', () => {
    const result = classic('{{setvar::a::1}}plain');
    expect(result.text).toBe('plain');
    expect(result.used_names).toEqual(['setvar']);
  });

  it('{{original}} is one-shot and only exists when an original is given', () => {
    expect(classic('{{original}}+{{original}}', {}, 'O').text).toBe('O+');
    expect(classic('{{original}}').text).toBe('{{original}}');
  });

  it('§g2 {{roll}}: "roll:" or "roll " then a droll formula; "roll::" is invalid → ""', () => {
    const a = Number(classic('{{roll:1d6}}').text);
    expect(a).toBeGreaterThanOrEqual(1);
    expect(a).toBeLessThanOrEqual(6);
    const b = Number(classic('{{roll 20}}').text);
    expect(b).toBeGreaterThanOrEqual(1);
    expect(b).toBeLessThanOrEqual(20);
    const invalid = classic('[{{roll::6}}]');
    expect(invalid.text).toBe('[]');
    expect(invalid.warnings.map((w) => w.code)).toContain('macro_invalid_roll');
  });

  it('§g7 {{random}}: :: items are not trimmed, comma items are', () => {
    for (let i = 0; i < 10; i++) {
      expect([' a ', ' b ']).toContain(classic('{{random:: a :: b }}', { seed: `s${i}` }).text);
      expect(['a', 'b']).toContain(classic('{{random: a , b }}', { seed: `s${i}` }).text);
    }
  });

  it('§g7 {{pick}}: seedrandom(getStringHash(chatIdHash-rawContentHash-offset)) with a numeric seed', () => {
    const text = 'x {{user}} {{pick::a::b::c::d}}';
    const expanded = 'x Alice {{pick::a::b::c::d}}';
    const offset = expanded.indexOf('{{pick');
    const rng = seedrandom(getStringHash(`${6301625224434831}-${getStringHash(text)}-${offset}`));
    const expected = ['a', 'b', 'c', 'd'][Math.floor(rng() * 4)];
    expect(classic(text).text).toBe(`x Alice ${expected}`);
  });

  it('the classic engine shares the session overlay with later texts', () => {
    const session = new MacroSession(baseContext({ engine: 'classic' }));
    session.expand('{{setvar::m::1}}');
    expect(session.expand('{{getvar::m}}')).toBe('1');
    expect(session.expand('{{getvar::m}}', { engine: 'v2' })).toBe('1');
  });

  it('group names (getGroupValue / getNotCharValue)', () => {
    const group = { members: ['Seraphina', 'Flux', 'Coder'], muted: ['Flux'] };
    expect(classic('{{group}}|{{groupNotMuted}}|{{notChar}}|<GROUP>', { group }).text).toBe(
      'Seraphina, Flux, Coder|Seraphina, Coder|Flux, Coder, Alice|Seraphina, Flux, Coder',
    );
  });

  it('dynamic macros come after the card fields and names', () => {
    expect(classic('{{extra}}', {}, undefined).text).toBe('{{extra}}');
    expect(
      expandMacros('{{Extra}}', baseContext({ engine: 'classic' }), {
        dynamicMacros: { extra: 'E {{user}}' },
      }).text,
    ).toBe('E {{user}}');
  });
});
