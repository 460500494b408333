import { baseContext } from './macro-fixtures';
import { MACRO_LIMITS } from './runtime';
import { expandMacros, MacroSession } from './session';
import { getStringHash, seedrandom } from './st-compat';
import type { MacroContext } from './types';
import { MAX_NESTING, parseDocument } from './v2-parser';

const v2 = (text: string, overrides: Partial<MacroContext> = {}, original?: string) =>
  expandMacros(text, baseContext({ engine: 'v2', ...overrides }), original === undefined ? {} : { original });

describe('v2 engine: macro table (reference §g, ST 1.18 macros/definitions/*.js)', () => {
  it.each([
    // identity (env-macros.js; §g 6)
    ['§g6 {{user}}', 'Hi {{user}}', 'Hi Alice'],
    ['§g6 {{char}}', '{{char}}', 'Seraphina'],
    ['§g names are case-insensitive', '{{USER}} {{Char}}', 'Alice Seraphina'],
    ['§g whitespace inside braces', '{{ user }}', 'Alice'],
    [
      '§g6 {{group}} outside a group is the character',
      '{{group}}|{{charIfNotGroup}}|{{groupNotMuted}}',
      'Seraphina|Seraphina|Seraphina',
    ],
    ['§g6 {{notChar}} outside a group is the user', '{{notChar}}', 'Alice'],
    [
      '§g6 {{description}} is the card field, expanded (getCharacterCardFields)',
      '{{description}}',
      'Seraphina guards Alice.',
    ],
    ['§g6 {{charDescription}} alias', '{{charDescription}}', 'Seraphina guards Alice.'],
    [
      '§g6 {{personality}} {{scenario}}',
      '{{personality}}/{{charPersonality}}/{{scenario}}/{{charScenario}}',
      'kind/kind/forest/forest',
    ],
    ['§g6 {{persona}}', '{{persona}}', 'A traveler called Alice.'],
    ['§g6 {{charPrompt}} {{charInstruction}}', '{{charPrompt}} {{charInstruction}}', 'SYS PHI'],
    ['§g6 {{charJailbreak}} is classic-only', '{{charJailbreak}}', '{{charJailbreak}}'],
    ['§g6 {{mesExamplesRaw}}', '{{mesExamplesRaw}}', '<START>\nAlice: hi\nSeraphina: hello'],
    [
      '§g6 {{mesExamples}} (chat completion: <START> blocks)',
      '{{mesExamples}}',
      '<START>\nAlice: hi\nSeraphina: hello\n',
    ],
    ['§g6 {{charVersion}} and legacy aliases', '{{charVersion}} {{char_version}} {{version}}', '1.2 1.2 1.2'],
    [
      '§g6 {{charDepthPrompt}} {{creatorNotes}}',
      '{{charDepthPrompt}} {{creatorNotes}} {{charCreatorNotes}}',
      'DEPTH notes notes',
    ],
    ['§g6 {{model}}', '{{model}}', 'gpt-4o'],
    [
      '{{greeting}} / {{charFirstMessage::n}}',
      '{{greeting}}|{{charFirstMessage::1}}|{{greeting::2}}|{{greeting::9}}',
      'Greetings|Alt one|Alt two|',
    ],
    ['{{lastGenerationType}} {{isMobile}}', '{{lastGenerationType}} {{isMobile}}', 'normal false'],
    // text (§g 5, §g 7)
    ['§g5 {{newline}}', 'a{{newline}}b', 'a\nb'],
    ['{{newline::2}}', 'a{{newline::2}}b', 'a\n\nb'],
    ['{{space::3}}', 'a{{space::3}}b', 'a   b'],
    ['§g5 {{trim}} removes itself and the newlines around it', 'a\n\n{{trim}}\nb', 'ab'],
    ['§g5 {{noop}}', 'a{{noop}}b', 'ab'],
    ['§g5 {{input}}', '{{input}}', 'typed text'],
    ['§g7 {{reverse::text}}', '{{reverse::abc}}', 'cba'],
    ['§g7 {{reverse:text}} single colon', '{{reverse:a:b}}', 'b:a'],
    ['§g7 {{// comment}}', 'a{{// a note :: with colons}}b', 'ab'],
    ['§g7 scoped comment {{//}}…{{///}}', 'a{{//}}line one\nline two{{///}}b', 'ab'],
    ['§g7 {{outlet::name}}', '[{{outlet::lore}}][{{outlet::missing}}]', '[Outlet text][]'],
    ['§g7 {{banned "word"}}', 'x{{banned "delve"}}y', 'xy'],
    [
      '§g7 limits',
      '{{maxPrompt}} {{maxPromptTokens}} {{maxContext}} {{maxContextTokens}} {{maxResponse}} {{maxResponseTokens}}',
      '8000 8000 8192 8192 300 300',
    ],
    // chat (§g 7, chat-macros.js)
    ['§g7 {{lastMessage}} (any speaker)', '{{lastMessage}}', 'Reply'],
    ['§g7 {{lastMessageId}}', '{{lastMessageId}}', '3'],
    ['§g7 {{lastUserMessage}} ignores hidden messages', '{{lastUserMessage}}', 'Hello there'],
    ['§g7 {{lastCharMessage}}', '{{lastCharMessage}}', 'Reply'],
    ['§g7 {{lastSwipeId}} is the swipe count', '{{lastSwipeId}}', '3'],
    ['§g7 {{currentSwipeId}} is 1-based', '{{currentSwipeId}}', '2'],
    [
      '§g7 {{firstIncludedMessageId}} {{firstDisplayedMessageId}}',
      '{{firstIncludedMessageId}} {{firstDisplayedMessageId}}',
      '1 0',
    ],
    ['§g7 {{allChatRange}}', '{{allChatRange}}', '0-3'],
    // time (§g 7, time-macros.js); now = 2026-11-21 21:19:48 UTC
    ['§g7 {{time}} (LT)', '{{time}}', '9:19 PM'],
    ['§g7 {{date}} (LL)', '{{date}}', 'November 21, 2026'],
    ['§g7 {{weekday}}', '{{weekday}}', 'Saturday'],
    ['§g7 {{isotime}}', '{{isotime}}', '21:19'],
    ['§g7 {{isodate}}', '{{isodate}}', '2026-11-21'],
    ['§g7 {{datetimeformat …}}', '{{datetimeformat YYYY-MM-DD HH:mm:ss}}', '2026-11-21 21:19:48'],
    [
      '§g7 {{datetimeformat::…}}',
      '{{datetimeformat::dddd, MMMM Do YYYY [day] DDD}}',
      'Saturday, November 21st 2026 day 325',
    ],
    ['§g7 {{time_UTC+2}} (pre-processed to {{time::UTC+2}})', '{{time_UTC+2}}', '11:19 PM'],
    ['{{time::UTC-10}}', '{{time::UTC-10}}', '11:19 AM'],
    ['§g7 {{idle_duration}}', '{{idle_duration}} / {{idleDuration}}', '3 hours / 3 hours'],
    [
      '§g7 {{timeDiff::a::b}} (humanize with suffix)',
      '{{timeDiff::2023-01-01 12:00:00::2023-01-01 15:00:00}}',
      '3 hours ago',
    ],
    ['{{timeDiff}} future', '{{ timeDiff :: 2023-01-03 :: 2023-01-01 }}', 'in 2 days'],
    // legacy markers (pre-processor)
    [
      '§g1 angle tags',
      '<USER>/<BOT>/<CHAR>/<GROUP>/<CHARIFNOTGROUP>',
      'Alice/Seraphina/Seraphina/Seraphina/Seraphina',
    ],
    // instruct macros are empty without instruct mode (§g3)
    ['§g3 instruct macros', '[{{instructInput}}{{systemPrompt}}{{chatStart}}]', '[]'],
  ])('%s', (_rule, input, expected) => {
    expect(v2(input).text).toBe(expected);
  });

  it('{{time}} and {{date}} follow the context timezone (never the process clock)', () => {
    expect(v2('{{time}} {{date}} {{isotime}}', { timezone: 'America/New_York' }).text).toBe(
      '4:19 PM November 21, 2026 16:19',
    );
    expect(v2('{{datetimeformat::Z}}', { timezone: 'Asia/Kolkata' }).text).toBe('+05:30');
  });

  it('an unknown timezone falls back to UTC with a warning', () => {
    const result = v2('{{isotime}}', { timezone: 'Mars/Olympus' });
    expect(result.text).toBe('21:19');
    expect(result.warnings.map((w) => w.code)).toContain('macro_invalid_timezone');
  });

  it('{{original}} is one-shot, and stays as written when no original is given', () => {
    expect(v2('{{original}}|{{original}}', {}, 'ORIG').text).toBe('ORIG|');
    expect(v2('{{original}}').text).toBe('{{original}}');
  });

  it('group names: members incl. muted, not muted, everyone but the speaker', () => {
    const group = { members: ['Seraphina', 'Flux', 'Coder'], muted: ['Coder'] };
    expect(v2('{{group}}|{{groupNotMuted}}|{{notChar}}', { group }).text).toBe(
      'Seraphina, Flux, Coder|Seraphina, Flux|Flux, Coder, Alice',
    );
  });
});

describe('v2 engine: variables (§g Variables, spec 2 "Macro compatibility")', () => {
  it.each([
    ['getvar', '{{getvar::x}}', '4'],
    ['getvar missing → ""', '[{{getvar::missing}}]', '[]'],
    ['setvar then getvar in the same text', '{{setvar::x::10}}{{getvar::x}}', '10'],
    ['setvar returns ""', '[{{setvar::n::1}}]', '[]'],
    ['addvar numeric', '{{addvar::x::3}}{{getvar::x}}', '7'],
    ['addvar string concatenation', '{{addvar::y::abc}}{{getvar::y}}', '5abc'],
    ['addvar appends to a JSON array', '{{addvar::list::3}}{{getvar::list}}', '[1,2,"3"]'],
    ['addvar on a missing key', '{{addvar::fresh::hi}}{{getvar::fresh}}', 'hi'],
    ['incvar returns the new value', '{{incvar::x}}', '5'],
    ['decvar on a missing key', '{{decvar::missing}}', '-1'],
    ['hasvar / varexists', '{{hasvar::x}} {{varexists::nope}}', 'true false'],
    ['deletevar / flushvar', '{{deletevar::x}}[{{getvar::x}}]{{flushvar::y}}[{{hasvar::y}}]', '[][false]'],
    ['path access into a JSON value', '{{getvar::obj.a.b}}', '2'],
    ['path access into a JSON string', '{{getvar::json.k.v}}', 'w'],
    ['object values read as JSON', '{{getvar::obj}}', '{"a":{"b":2}}'],
    ['path write stores the root key', '{{setvar::obj.a.c::7}}{{getvar::obj}}', '{"a":{"b":2,"c":"7"}}'],
    ['getglobalvar', '{{getglobalvar::g}}', '10'],
    ['incglobalvar / decglobalvar', '{{incglobalvar::g}} {{decglobalvar::g}}', '11 10'],
    ['setglobalvar / addglobalvar', '{{setglobalvar::h::2}}{{addglobalvar::h::3}}{{getglobalvar::h}}', '5'],
    [
      'hasglobalvar / deleteglobalvar',
      '{{hasglobalvar::g}}{{deleteglobalvar::g}}{{globalvarexists::g}}',
      'truefalse',
    ],
    ['nested macro in a name', '{{setvar::k::x}}{{getvar::{{getvar::k}}}}', '4'],
    [
      'scoped setvar: content trimmed and dedented',
      '{{setvar::story}}\n    Once upon\n    a time  \n{{/setvar}}{{getvar::story}}',
      'Once upon\na time',
    ],
    ['scoped with # keeps whitespace', '{{#setvar::s}} a {{/setvar}}[{{getvar::s}}]', '[ a ]'],
    // shorthands (new engine only; MacroCstWalker #evaluateVariableExpr)
    ['.name reads local', '{{.x}}', '4'],
    ['$name reads global', '{{$g}}', '10'],
    ['.name++ / .name--', '{{.x++}} {{.x--}}', '5 4'],
    ['.name = value', '{{.x = 9}}{{.x}}', '9'],
    ['.name += value', '{{.x += 2}}{{.x}}', '6'],
    ['.name -= value', '{{.x -= 1}}{{.x}}', '3'],
    ['|| default for a falsy value', '{{.missing || fallback}} {{.flag || on}}', 'fallback on'],
    ['?? default only for a missing value', '{{.flag ?? other}} {{.missing ?? other}}', 'off other'],
    ['??= assigns when missing', '{{.fresh ??= 7}}{{.fresh}}', '77'],
    ['||= assigns when falsy', '{{.flag ||= yes}}{{.flag}}', 'yesyes'],
    ['== / !=', '{{.x == 4}} {{.x != 4}}', 'true false'],
    ['> >= < <=', '{{.x > 3}} {{.x >= 5}} {{.x < 5}} {{.x <= 3}}', 'true false true false'],
    ['$name = value', '{{$g = 1}}{{$g}}', '1'],
    ['value may hold macros', '{{.who = {{user}}!}}{{.who}}', 'Alice!'],
  ])('%s', (_rule, input, expected) => {
    expect(v2(input).text).toBe(expected);
  });

  it('numeric comparison with a non-number is false with a warning', () => {
    const result = v2('{{.y > abc}}');
    expect(result.text).toBe('false');
    expect(result.warnings.map((w) => w.code)).toContain('macro_invalid_operand');
  });

  it('-= with a non-number changes nothing and warns', () => {
    const result = v2('{{.x -= abc}}{{.x}}');
    expect(result.text).toBe('4');
    expect(result.staged_mutations).toEqual([]);
    expect(result.warnings.map((w) => w.code)).toContain('macro_invalid_operand');
  });
});

describe('v2 engine: {{if}} / {{else}} (core-macros.js)', () => {
  it.each([
    ['variable shorthand condition', '{{if .x}}yes{{else}}no{{/if}}', 'yes'],
    ['missing variable is falsy', '{{if .missing}}yes{{else}}no{{/if}}', 'no'],
    ['! inverts', '{{if !.missing}}neg{{/if}}', 'neg'],
    ['a bare macro name is resolved', '{{if description}}has{{/if}}{{if charDepthPrompt}}!{{/if}}', 'has!'],
    ['"off" is falsy', '{{if {{getvar::flag}}}}on{{else}}off{{/if}}', 'off'],
    ['"0" and "false" are falsy', '{{if 0}}a{{/if}}{{if false}}b{{/if}}{{if yes}}c{{/if}}', 'c'],
    ['inline form takes :: arguments', '{{if::1::inline}}', 'inline'],
    [
      'after whitespace the rest is one argument (MacroParser), so this is not inline',
      '{{if 1::inline}}',
      '{{if 1::inline}}',
    ],
    ['nested if with its own else', '{{if .x}}A{{if .missing}}B{{else}}C{{/if}}D{{/if}}', 'ACD'],
    ['branch content is trimmed and dedented', '{{if .x}}\n  # Head\n  body\n{{/if}}', '# Head\nbody'],
    ['# keeps whitespace', '{{#if .x}} a {{/if}}', ' a '],
    ['{{else}} outside an if disappears', 'a{{else}}b', 'ab'],
    ['case-insensitive closing', '{{IF .x}}yes{{/if}}', 'yes'],
  ])('%s', (_rule, input, expected) => {
    expect(v2(input).text).toBe(expected);
  });

  it('only the chosen branch is evaluated (no side effects from the other)', () => {
    const result = v2(
      '{{if .missing}}{{setvar::z::1}}{{else}}{{setvar::w::2}}{{/if}}{{hasvar::z}}{{hasvar::w}}',
    );
    expect(result.text).toBe('falsetrue');
    expect(result.staged_mutations.map((m) => m.key)).toEqual(['w']);
  });
});

describe('v2 engine: syntax edge cases', () => {
  it.each([
    ['unknown macro keeps its braces with nested macros resolved', '{{foo::{{user}}}}', '{{foo::Alice}}'],
    ['wrong argument count stays as written', '{{user::extra}}', '{{user::extra}}'],
    ['wrong argument type stays as written', '{{newline::abc}}', '{{newline::abc}}'],
    ['a negative count stays as written (String.repeat throws in ST)', '{{space::-1}}', '{{space::-1}}'],
    ['a zero count is empty', '[{{newline::0}}]', '[]'],
    ['unclosed macro is text', '{{user}} and {{char', 'Alice and {{char'],
    ['brace before a macro is text', '{{{user}}}', '{Alice}'],
    ['escaped braces are unescaped', '\\{\\{user\\}\\}', '{{user}}'],
    ['empty braces are text', '{{}}', '{{}}'],
    ['invalid identifier is text', "{{user's}} {{1x}}", "{{user's}} {{1x}}"],
    ['unmatched closing tag is text', 'a{{/if}}b', 'a{{/if}}b'],
    ['arguments are trimmed', '{{reverse::  ab  }}', 'ba'],
    ['unknown scoped macro (ST keeps the opener and drops the closer)', '{{foo}}x{{/foo}}', '{{foo}}x}}'],
    [
      'a closer of a macro that takes no content stays raw with its opener',
      '{{user}}x{{/user}}',
      '{{user}}x{{/user}}',
    ],
    ['scoped trim', '{{trim}}  padded  {{/trim}}', 'padded'],
    ['deep nesting resolves inside-out', '{{reverse::{{reverse::{{reverse::{{user}}}}}}}}', 'ecilA'],
  ])('%s', (_rule, input, expected) => {
    expect(v2(input).text).toBe(expected);
  });

  it('warns for unknown macros, bad arguments and malformed macros', () => {
    expect(v2('{{foo}}').warnings.map((w) => w.code)).toContain('macro_unknown');
    expect(v2('{{user::x}}').warnings.map((w) => w.code)).toContain('macro_invalid_arguments');
    expect(v2('{{user').warnings.map((w) => w.code)).toContain('macro_syntax');
  });

  it('caps repeat counts and dice counts instead of allocating without bound', () => {
    const spaces = v2('{{space::99999999}}');
    expect(spaces.text.length).toBe(10_000);
    expect(spaces.warnings.map((w) => w.code)).toContain('macro_limit');
    const dice = v2('{{roll::5000d6}}');
    expect(dice.text).toBe('');
    expect(dice.warnings.map((w) => w.code)).toContain('macro_limit');
  });

  it('nesting beyond the limit is left as text with a warning, never a stack overflow', () => {
    const deep = '{{reverse::'.repeat(500) + 'x' + '}}'.repeat(500);
    const result = v2(deep);
    expect(typeof result.text).toBe('string');
    expect(result.warnings.map((w) => w.code)).toContain('macro_nesting_limit');
  });
  const codes = (result: { warnings: { code: string }[] }) => result.warnings.map((w) => w.code);
  const blocks = (levels: number, inner = 'x') =>
    '{{if 1}}'.repeat(levels) + inner + '{{/if}}'.repeat(levels);

  it(`evaluates {{if}} blocks nested ${MAX_NESTING - 1} deep, and leaves deeper ones as text`, () => {
    // The top-level text is one walk; each block's content is one more.
    const atLimit = v2(blocks(MAX_NESTING - 1, '{{user}}'));
    expect(atLimit.text).toBe('Alice');
    expect(codes(atLimit)).toEqual([]);
    const past = v2(blocks(MAX_NESTING, '{{user}}'));
    expect(past.text).toBe('{{user}}');
    expect(codes(past)).toEqual(['macro_nesting_limit']);
  });

  it('4,000 nested {{if}} blocks end as text with a warning, not a stack overflow or gigabytes', () => {
    const result = v2(blocks(4000));
    expect(codes(result)).not.toContain('macro_internal_error');
    expect(codes(result)).toContain('macro_limit');
    // The outer blocks were evaluated (their markers are gone), the rest is left as written.
    expect(result.text.startsWith('{{if 1}}')).toBe(true);
    expect(result.text.length).toBeLessThan(blocks(4000).length);
    expect(result.text).toContain('x{{/if}}');
  });

  describe(`parse budget (${MACRO_LIMITS.parseBudgetFactor} x the input + ${MACRO_LIMITS.parseBudgetFloor} characters)`, () => {
    // Each level of {{if}} reads its content twice (the {{else}} split, then the chosen branch).
    const filler = 'y'.repeat(100_000);
    it('a text whose nested re-reads stay inside the budget is evaluated whole', () => {
      const result = v2(blocks(3, filler));
      expect(result.text).toBe(filler);
      expect(codes(result)).toEqual([]);
    });
    it('past the budget, what is left is text and a macro_limit warning says so', () => {
      const result = v2(blocks(20, filler));
      expect(codes(result)).toContain('macro_limit');
      expect(codes(result)).not.toContain('macro_nesting_limit');
      expect(result.text).toContain('{{if 1}}' + filler);
      expect(result.text.length).toBeLessThan(blocks(20, filler).length);
    });
  });

  it('pairs a block after thousands of inline macros of its name (they never change the pairing depth)', () => {
    const ifs = v2('{{if::1::a}}'.repeat(2000) + '{{if 0}}HIDDEN{{/if}}');
    expect(ifs.text).toBe('a'.repeat(2000));
    expect(codes(ifs)).toEqual([]);
    const comments = v2('{{// note}}x'.repeat(2000) + '{{//}}HIDDEN{{///}}');
    expect(comments.text).toBe('x'.repeat(2000));
    expect(codes(comments)).toEqual([]);
  });

  it('pairs up to 64 forward steps per macro; openers with no closing macro past that stay unpaired', () => {
    // 150 openers before one {{/if}}: ~11,000 steps, inside 64 x 151 + 4096. 400: ~80,000, past it.
    const within = v2('{{if 1}}a'.repeat(150) + '{{/if}}');
    expect(codes(within)).not.toContain('macro_limit');
    const past = v2('{{if 1}}a'.repeat(400) + '{{/if}}');
    expect(codes(past)).toContain('macro_limit');
    expect(past.text).toContain('a');
  });

  it(`stops staging {{addvar}} on a large JSON array at the write budget (${MACRO_LIMITS.maxWrittenChars} characters)`, () => {
    const list = JSON.stringify(Array.from({ length: 150_000 }, (_, i) => i % 10)); // ~300,000 characters
    const result = v2('{{addvar::list::1}}'.repeat(200), { variables: { local: { list }, global: {} } });
    expect(codes(result)).toContain('macro_limit');
    const accepted = result.staged_mutations.length;
    // Each append stages the array before and after: ~600,000 characters against the budget.
    expect(accepted).toBe(Math.floor(MACRO_LIMITS.maxWrittenChars / (2 * list.length)) + 1);
    const staged = JSON.parse(result.staged_mutations[accepted - 1].after as string) as number[];
    expect(staged).toHaveLength(150_000 + accepted);
  });

  it('parses a text nested 4,000 deep in linear steps (a nesting-limited parse is not repeated)', () => {
    for (const levels of [1000, 4000]) {
      const text = '{{if::1::'.repeat(levels) + 'x' + '}}'.repeat(levels);
      const tokens = levels * 3;
      expect(parseDocument(text).steps).toBeLessThanOrEqual(2 * tokens);
    }
    const result = v2('{{if::1::'.repeat(4000) + 'x' + '}}'.repeat(4000));
    expect(codes(result)).toContain('macro_nesting_limit');
  });
});

describe('v2 engine: random, pick, roll (core-macros.js, seeded)', () => {
  it('{{roll}}: droll formula, bare number means 1dN, invalid gives "" with a warning', () => {
    for (let i = 0; i < 20; i++) {
      const seed = `s${i}`;
      const n = Number(v2('{{roll::20}}', { seed }).text);
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(20);
      const m = Number(v2('{{roll 2d6+3}}', { seed }).text);
      expect(m).toBeGreaterThanOrEqual(5);
      expect(m).toBeLessThanOrEqual(15);
    }
    expect(v2('{{roll:1d1}}').text).toBe('1');
    const invalid = v2('[{{roll::abc}}]');
    expect(invalid.text).toBe('[]');
    expect(invalid.warnings.map((w) => w.code)).toContain('macro_invalid_roll');
  });

  it('{{random}} picks from :: lists and comma lists (\\, escapes a comma); empty list gives ""', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) seen.add(v2('{{random::a::b::c}}', { seed: `r${i}` }).text);
    expect([...seen].sort()).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < 10; i++) {
      expect(['x,y', 'z']).toContain(v2('{{random: x\\,y , z}}', { seed: `c${i}` }).text);
    }
    expect(v2('[{{random}}]').text).toBe('[]');
    expect(v2('{{random::only}}').text).toBe('only');
  });

  it('{{random}} draws from forkRandom(seed, "macros"): same seed, same result', () => {
    const text = '{{random::1::2::3::4::5::6::7::8}} {{roll::1d1000}}';
    expect(v2(text, { seed: 'same' }).text).toBe(v2(text, { seed: 'same' }).text);
  });

  it('{{pick}} is stable per chat, content and position: ST seed getStringHash(chatIdHash-contentHash-offset)', () => {
    const text = 'A {{pick::red::green::blue::black}} B';
    const offset = text.indexOf('{{pick');
    const seedString = `${6301625224434831}-${getStringHash(text)}-${offset}`;
    const rng = seedrandom(String(getStringHash(seedString)));
    const expected = ['red', 'green', 'blue', 'black'][Math.floor(rng() * 4)];
    expect(v2(text, { seed: 'one' }).text).toBe(`A ${expected} B`);
    expect(v2(text, { seed: 'two' }).text).toBe(`A ${expected} B`);
  });

  it('{{pick}} without a chat hash derives one from the chat id', () => {
    const text = '{{pick::a::b::c::d::e}}';
    const seedString = `${getStringHash('chat-1')}-${getStringHash(text)}-0`;
    const rng = seedrandom(String(getStringHash(seedString)));
    expect(v2(text, { chatIdHash: null, chatId: 'chat-1' }).text).toBe(
      ['a', 'b', 'c', 'd', 'e'][Math.floor(rng() * 5)],
    );
  });
});

describe('v2 engine: shared session', () => {
  it('a setvar in an early prompt is seen by a getvar later in the same turn (§j "Macros run at assembly")', () => {
    const session = new MacroSession(baseContext());
    expect(session.expand('{{setvar::mood::happy}}Main prompt', { source: 'main' })).toBe('Main prompt');
    expect(session.expand('Mood: {{getvar::mood}}', { source: 'jailbreak' })).toBe('Mood: happy');
    const diagnostics = session.diagnostics();
    expect(diagnostics.staged_mutations).toHaveLength(1);
    expect(diagnostics.traces.map((t) => [t.source, t.used_names, t.mutation_count])).toEqual([
      ['main', ['setvar'], 1],
      ['jailbreak', ['getvar'], 0],
    ]);
  });

  it('card fields are expanded once per assembly (a setvar inside a description runs once)', () => {
    const session = new MacroSession(baseContext({ character: { description: '{{incvar::seen}}D' } }));
    session.expand('{{description}}');
    session.expand('{{description}} {{description}}');
    expect(session.expand('{{getvar::seen}}')).toBe('1');
  });
});

describe('v2 engine: many macros of one name (the scoped pairing scans only names closed later)', () => {
  it('expands 5,000 plain {{getvar::x}} and leaves openers after the last closing macro unpaired', () => {
    expect(v2('{{getvar::x}}'.repeat(5000)).text).toBe('4'.repeat(5000));
    expect(v2('{{getvar::x}}{{/getvar}}{{getvar::x}}').text).toBe(v2('{{getvar::x}}{{/getvar}}').text + '4');
  });
});
