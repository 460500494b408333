import { DomainError } from '../errors';
import { EXT_JSONL_LIMITS, parseExtJsonl, ParsedExtJsonl } from './chat-jsonl';
import { ExtJsonlExportFloor, serializeExtJsonl, ST_NARRATOR_NAME } from './chat-jsonl-export';
import { parseSendDate } from './chat-send-date';
import { expectFieldEquivalent, expectParseError, fixtureFiles, readFixture } from './format.test-support';
import { pageChecksum } from './nchat';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const FILES = fixtureFiles('chats', '.jsonl');
const NAMES = { user_name: 'User', character_name: 'Macro Mage' };
const HEADER = { chat_metadata: {}, user_name: 'unused', character_name: 'unused' };

const fixtureText = (name: string) => readFixture('chats', name).toString('utf8');
const file = (...lines: unknown[]) => [HEADER, ...lines].map((line) => JSON.stringify(line)).join('\n');
const user = (mes: string, more: Record<string, unknown> = {}) => ({
  name: 'User',
  is_user: true,
  is_system: false,
  send_date: '2026-11-21T21:19:53.391Z',
  mes,
  extra: {},
  ...more,
});
const bot = (mes: string, more: Record<string, unknown> = {}) => ({
  name: 'Bot',
  is_user: false,
  send_date: '2026-11-21T21:19:57.578Z',
  mes,
  extra: {},
  ...more,
});
const narrator = (mes: string, more: Record<string, unknown> = {}) =>
  bot(mes, { name: 'System', is_system: '', extra: { type: 'narrator' }, ...more });

/** What a jsonb column does to the tree: keys reordered (sorted) at every level. */
function throughStorage<T>(value: T): T {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .reverse()
          .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return sortKeys(JSON.parse(JSON.stringify(value))) as T;
}

/** Floors as `kind:role:content*` strings (`*` = active page, `~` = hidden). */
function shape(parsed: ParsedExtJsonl): string[][] {
  return parsed.floors.map((floor) =>
    floor.pages.map(
      (page) =>
        `${page.page_kind}:${page.messages.map((m) => `${m.role}:${m.content}${m.is_hidden ? '~' : ''}`).join('|')}` +
        (page.is_active ? '*' : ''),
    ),
  );
}

function expectDomainError(fn: () => unknown, code: string, status = 400): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DomainError);
  expect({ code: (caught as DomainError).code, status: (caught as DomainError).status }).toEqual({
    code,
    status,
  });
  return caught as DomainError;
}

describe('ext_jsonl chat files', () => {
  it('has the two SillyTavern 1.18 chat fixtures', () => {
    expect(FILES).toEqual([
      'MacroMage.swipes.st-1.18.0.jsonl',
      'Seraphina.st-default-content.st-1.18.0.jsonl',
    ]);
  });

  describe('round trip of the real files', () => {
    it.each(FILES)('%s serializes back to an equivalent file, line by line and field by field', (name) => {
      const text = fixtureText(name);
      const stored = throughStorage(parseExtJsonl(text, { now: NOW }));
      const exported = serializeExtJsonl(stored, NAMES);
      const expectedLines = text.split('\n');
      const actualLines = exported.split('\n');
      expect(actualLines).toHaveLength(expectedLines.length);
      expect(exported.endsWith('\n')).toBe(text.endsWith('\n'));
      expectedLines.forEach((line, i) =>
        expectFieldEquivalent(JSON.parse(actualLines[i]), JSON.parse(line), `$[${i}]`),
      );
    });

    it.each(FILES)('%s parses to the same tree again after an export', (name) => {
      const first = parseExtJsonl(fixtureText(name), { now: NOW });
      const again = parseExtJsonl(serializeExtJsonl(throughStorage(first), NAMES), { now: NOW + 1 });
      expect(again).toEqual(first);
    });
  });

  describe('the Macro Mage file', () => {
    const parsed = parseExtJsonl(fixtureText('MacroMage.swipes.st-1.18.0.jsonl'), { now: NOW });

    it('keeps the header with chat_metadata and its variables', () => {
      expect(parsed.header.chat_metadata).toMatchObject({
        variables: { trick: 'dove', x: 4, y: '5' },
        tainted: true,
      });
      expect(parsed.header).toMatchObject({ user_name: 'unused', character_name: 'unused' });
    });

    it('makes a greeting floor of three unexpanded greetings and a floor of the reply with three swipes', () => {
      expect(shape(parsed)).toEqual([
        [
          'greeting:assistant:Welcome, {{user}}! I am {{char}}.*',
          'greeting:assistant:Ah, {{user}}, back again?',
          'greeting:assistant:The curtain rises for {{user}}.',
        ],
        [
          'input:user:Hello Macro Mage, I am User. y=5*',
          'output:assistant:ECHO: Hello Macro Mage, I am User. y=5',
          'output:assistant:ECHO: Hello Macro Mage, I am User. y=5 [swipe 2]*',
          'output:assistant:ECHO: Hello Macro Mage, I am User. y=5 [swipe 3]',
        ],
      ]);
      expect(parsed.floors.map((f) => f.floor_no)).toEqual([0, 1]);
      expect(parsed.floors[1].pages.map((p) => [p.page_no, p.version])).toEqual([
        [0, 1],
        [1, 1],
        [2, 2],
        [3, 3],
      ]);
      expect(parsed.counts).toEqual({
        floor_count: 2,
        message_count: 7,
        swipe_count: 4,
        skipped_lines: 0,
        line_count: 3,
      });
      expect(parsed.warnings).toEqual([]);
    });

    it('dates each swipe from its swipe_info and the selected one from the line', () => {
      const outputs = parsed.floors[1].pages.filter((p) => p.page_kind === 'output');
      expect(outputs.map((p) => p.messages[0].created_at)).toEqual([
        Date.parse('2026-11-21T21:19:53.630Z'),
        Date.parse('2026-11-21T21:19:57.578Z'),
        Date.parse('2026-11-21T21:19:59.277Z'),
      ]);
    });

    it('marks every message as imported text with its speaker name and a page checksum', () => {
      const messages = parsed.floors.flatMap((f) => f.pages.flatMap((p) => p.messages));
      expect(new Set(messages.map((m) => `${m.source}/${m.content_format}/${m.seq}`))).toEqual(
        new Set(['import/text/0']),
      );
      expect(messages.map((m) => m.name)).toEqual([
        'Macro Mage',
        'Macro Mage',
        'Macro Mage',
        'User',
        'Macro Mage',
        'Macro Mage',
        'Macro Mage',
      ]);
      for (const page of parsed.floors.flatMap((f) => f.pages)) {
        expect(page.checksum).toBe(pageChecksum(page.messages));
      }
    });

    it('keeps the expanded greeting text for the export while the page holds the raw text', () => {
      const greeting = parsed.floors[0].pages[0].messages[0];
      expect(greeting.extra.ext_jsonl.mes).toEqual({
        text: 'Welcome, User! I am Macro Mage.',
        for_content: 'Welcome, {{user}}! I am {{char}}.',
      });
      const edited = throughStorage(parsed);
      edited.floors[0].pages[0].messages[0].content = 'Hello {{user}}.';
      const line = JSON.parse(serializeExtJsonl(edited, NAMES).split('\n')[1]);
      expect(line.mes).toBe('Hello {{user}}.');
      expect(line.swipes[0]).toBe('Hello {{user}}.');
    });

    it('exports a swipe chosen after import with its own dates and extra', () => {
      const edited = throughStorage(parsed);
      const pages = edited.floors[1].pages;
      pages.forEach((p) => (p.is_active = p.page_kind === 'input' || p.version === 3));
      const line = JSON.parse(serializeExtJsonl(edited, NAMES).split('\n')[3]);
      expect(line).toMatchObject({
        swipe_id: 2,
        mes: 'ECHO: Hello Macro Mage, I am User. y=5 [swipe 3]',
        send_date: '2026-11-21T21:19:59.277Z',
        gen_started: '2026-11-21T21:19:59.087Z',
        gen_finished: '2026-11-21T21:19:59.277Z',
        title: '',
      });
      expect(line.swipes).toHaveLength(3);
      expect(line.swipe_info).toHaveLength(3);
    });
  });

  describe('grouping rules', () => {
    it.each([
      ['a user message starts a floor with an input page', [user('hi')], [['input:user:hi*']]],
      [
        'a reply joins the floor of the user message as an output page',
        [user('hi'), bot('yo')],
        [['input:user:hi*', 'output:assistant:yo*']],
      ],
      [
        'an assistant message at the file start is the greeting floor',
        [bot('hello')],
        [['greeting:assistant:hello*']],
      ],
      [
        'the greeting is followed by a user floor',
        [bot('hello'), user('hi'), bot('yo')],
        [['greeting:assistant:hello*'], ['input:user:hi*', 'output:assistant:yo*']],
      ],
      [
        'a second assistant message at the file start starts a floor without input page',
        [bot('hello'), bot('again')],
        [['greeting:assistant:hello*'], ['output:assistant:again*']],
      ],
      [
        'consecutive replies: each extra one starts a floor without input page',
        [user('hi'), bot('one'), bot('two'), bot('three')],
        [['input:user:hi*', 'output:assistant:one*'], ['output:assistant:two*'], ['output:assistant:three*']],
      ],
      [
        'consecutive user messages are floors of their own',
        [user('a'), user('b')],
        [['input:user:a*'], ['input:user:b*']],
      ],
      [
        'a narrator line at the file start is not a greeting',
        [narrator('It rains.'), user('hi')],
        [['output:system:It rains.*'], ['input:user:hi*']],
      ],
      [
        'a narrator line after a user message is its output page',
        [user('hi'), narrator('It rains.'), bot('yo')],
        [['input:user:hi*', 'output:system:It rains.*'], ['output:assistant:yo*']],
      ],
      [
        'every swipe is a page and swipe_id selects the active one',
        [user('hi'), bot('b', { swipes: ['a', 'b', 'c'], swipe_id: 1 })],
        [['input:user:hi*', 'output:assistant:a', 'output:assistant:b*', 'output:assistant:c']],
      ],
      [
        'greeting swipes are greeting pages',
        [bot('x', { swipes: ['x', 'y'], swipe_id: 0 })],
        [['greeting:assistant:x*', 'greeting:assistant:y']],
      ],
    ])('%s', (_title, lines, expected) => {
      const parsed = parseExtJsonl(file(...lines), { now: NOW });
      expect(shape(parsed)).toEqual(expected);
      expect(parsed.counts.floor_count).toBe(expected.length);
      expect(parsed.floors.map((f) => f.floor_no)).toEqual(expected.map((_f, i) => i));
    });

    it('numbers pages per floor and versions per kind', () => {
      const parsed = parseExtJsonl(file(user('hi'), bot('b', { swipes: ['a', 'b'], swipe_id: 1 })), {
        now: NOW,
      });
      expect(parsed.floors[0].pages.map((p) => [p.page_no, p.page_kind, p.version])).toEqual([
        [0, 'input', 1],
        [1, 'output', 1],
        [2, 'output', 2],
      ]);
    });
  });

  describe('hidden and narrator messages', () => {
    it.each([
      ['is_system true hides a reply', bot('x', { is_system: true }), 'assistant', true],
      ['is_system true hides a user message', user('x', { is_system: true }), 'user', true],
      ['is_system false is visible', bot('x', { is_system: false }), 'assistant', false],
      ['a missing is_system is visible', bot('x'), 'assistant', false],
      ['a narrator line (is_system "") is a visible system message', narrator('x'), 'system', false],
      ['a hidden narrator line stays hidden', narrator('x', { is_system: true }), 'system', true],
      [
        'a UI notice (type help, is_system true) is a hidden assistant line',
        bot('x', { is_system: true, extra: { type: 'help' } }),
        'assistant',
        true,
      ],
    ])('%s', (_title, line, role, hidden) => {
      const parsed = parseExtJsonl(file(user('hi'), line), { now: NOW });
      const message = parsed.floors.at(-1)!.pages.at(-1)!.messages[0];
      expect({ role: message.role, is_hidden: message.is_hidden }).toEqual({ role, is_hidden: hidden });
    });

    it('exports both back as they were written', () => {
      const lines = [user('hi'), narrator('It rains.'), bot('x', { is_system: true })];
      const exported = serializeExtJsonl(parseExtJsonl(file(...lines), { now: NOW }), NAMES)
        .split('\n')
        .slice(1);
      exported.forEach((line, i) => expectFieldEquivalent(JSON.parse(line), lines[i], `$[${i}]`));
    });
  });

  describe('swipes', () => {
    it('activates the swipe whose text is mes when swipe_id is not an index, with a warning', () => {
      const parsed = parseExtJsonl(file(user('hi'), bot('c', { swipes: ['a', 'b', 'c'], swipe_id: 7 })), {
        now: NOW,
      });
      expect(parsed.floors[0].pages.filter((p) => p.is_active).map((p) => p.messages[0].content)).toEqual([
        'hi',
        'c',
      ]);
      expect(parsed.warnings).toEqual([expect.stringMatching(/line 3: swipe_id .* swipe 2 is active/)]);
    });

    it('activates the first swipe when neither swipe_id nor mes points at one', () => {
      const parsed = parseExtJsonl(file(user('hi'), bot('z', { swipes: ['a', 'b'] })), { now: NOW });
      expect(parsed.floors[0].pages.filter((p) => p.is_active).map((p) => p.messages[0].content)).toEqual([
        'hi',
        'a',
      ]);
      expect(parsed.warnings).toHaveLength(1);
    });

    it('counts alternative swipes only', () => {
      const parsed = parseExtJsonl(
        file(
          bot('g', { swipes: ['g', 'h'], swipe_id: 0 }),
          user('hi'),
          bot('b', { swipes: ['a', 'b', 'c'], swipe_id: 1 }),
        ),
        { now: NOW },
      );
      expect(parsed.counts).toMatchObject({
        swipe_count: 3,
        message_count: 6,
        line_count: 3,
        floor_count: 2,
      });
    });

    it('keeps invalid swipes raw and imports the line as one page', () => {
      const line = bot('x', { swipes: [], swipe_id: 0 });
      const parsed = parseExtJsonl(file(user('hi'), line), { now: NOW });
      expect(shape(parsed)).toEqual([['input:user:hi*', 'output:assistant:x*']]);
      expectFieldEquivalent(JSON.parse(serializeExtJsonl(parsed, NAMES).split('\n')[2]), line);
    });
  });

  describe('send_date', () => {
    it.each([
      ['a number (always ms)', 1763760000123, 1763760000123],
      ['a small number is still ms', 1700000000, 1700000000],
      ['an all-digit string', '1763760000123', 1763760000123],
      ['ISO 8601 UTC', '2025-09-26T07:04:12.006Z', Date.UTC(2025, 8, 26, 7, 4, 12, 6)],
      ['ISO 8601 with an offset', '2025-09-26T09:04:12+02:00', Date.UTC(2025, 8, 26, 7, 4, 12)],
      ['ISO 8601 without a zone (UTC)', '2025-09-26T07:04:12', Date.UTC(2025, 8, 26, 7, 4, 12)],
      ['an ISO date', '2025-09-26', Date.UTC(2025, 8, 26)],
      ['Month D, YYYY h:mmpm', 'June 19, 2023 2:20pm', Date.UTC(2023, 5, 19, 14, 20)],
      [
        'Month D, YYYY h:mmpm (the brief example)',
        'November 21, 2026 9:19pm',
        Date.UTC(2026, 10, 21, 21, 19),
      ],
      ['12 am is midnight', 'June 19, 2023 12:05am', Date.UTC(2023, 5, 19, 0, 5)],
      ['12 pm is noon', 'June 19, 2023 12:05pm', Date.UTC(2023, 5, 19, 12, 5)],
      ['a short month name', 'Jun 19, 2023 2:20pm', Date.UTC(2023, 5, 19, 14, 20)],
      ['humanized with ms', '2024-07-12@01h31m37s123ms', Date.UTC(2024, 6, 12, 1, 31, 37, 123)],
      ['humanized without ms', '2024-7-12@01h31m37s', Date.UTC(2024, 6, 12, 1, 31, 37)],
      ['humanized with spaces', '2024-6-5 @14h 56m 50s 682ms', Date.UTC(2024, 5, 5, 14, 56, 50, 682)],
      ['an impossible day', 'February 30, 2023 1:00pm', null],
      ['an impossible hour', '2024-07-12@25h31m37s', null],
      ['13 pm', 'June 19, 2023 13:20pm', null],
      ['an unknown month', 'Juno 19, 2023 2:20pm', null],
      ['free text', 'yesterday', null],
      ['an empty string', '', null],
      ['null', null, null],
      ['a boolean', true, null],
      ['NaN', Number.NaN, null],
    ])('%s', (_title, value, expected) => {
      expect(parseSendDate(value)).toBe(expected);
    });

    it('falls back to the import time for a missing or unreadable date, with a warning', () => {
      const parsed = parseExtJsonl(
        file(user('a', { send_date: 'someday' }), bot('b', { send_date: undefined })),
        {
          now: NOW,
        },
      );
      expect(parsed.floors[0].pages.map((p) => p.messages[0].created_at)).toEqual([NOW, NOW]);
      expect(parsed.warnings).toEqual([
        expect.stringMatching(/^2 line\(s\) without a readable send_date .*: 2, 3$/),
      ]);
    });

    it('keeps the written send_date for the export', () => {
      const line = user('a', { send_date: 'June 19, 2023 2:20pm' });
      const exported = serializeExtJsonl(parseExtJsonl(file(line), { now: NOW }), NAMES);
      expect(JSON.parse(exported.split('\n')[1]).send_date).toBe('June 19, 2023 2:20pm');
    });
  });

  describe('malformed input', () => {
    it('skips and counts malformed message lines, ignoring blank lines', () => {
      const text = [
        JSON.stringify(HEADER),
        JSON.stringify(user('one')),
        '{not json',
        '',
        '[1, 2]',
        '42',
        JSON.stringify({ name: 'x', is_user: false }),
        JSON.stringify({ ...bot('two'), mes: 5 }),
        '   ',
        JSON.stringify(bot('three')),
        '',
      ].join('\r\n');
      const parsed = parseExtJsonl(text, { now: NOW });
      expect(shape(parsed)).toEqual([['input:user:one*', 'output:assistant:three*']]);
      expect(parsed.counts).toMatchObject({ skipped_lines: 5, line_count: 2, message_count: 2 });
      expect(parsed.warnings).toEqual(['skipped 5 malformed line(s): 3, 5, 6, 7, 8']);
    });

    it('tolerates a UTF-8 byte order mark', () => {
      expect(shape(parseExtJsonl(`\ufeff${file(user('hi'))}`, { now: NOW }))).toEqual([['input:user:hi*']]);
    });

    it.each([
      [
        'a header that is not JSON',
        `{"chat_metadata": {\n${JSON.stringify(user('hi'))}`,
        /header line is not valid JSON/,
      ],
      ['a header that is an array', `[]\n${JSON.stringify(user('hi'))}`, /header line must be an object/],
      [
        'a header without chat_metadata, user_name or name',
        `{"a":1}\n${JSON.stringify(user('hi'))}`,
        /header line must be/,
      ],
    ])('rejects %s with import_parse_error', (_title, text, message) => {
      expectParseError(() => parseExtJsonl(text, { now: NOW }), message);
    });

    it.each([
      ['an empty file', ''],
      ['only blank lines', '\n  \n'],
      ['a header only', JSON.stringify(HEADER)],
      ['a header and malformed lines only', `${JSON.stringify(HEADER)}\nnope\n{"is_user":true}`],
    ])('rejects %s with import_empty', (_title, text) => {
      const error = expectDomainError(() => parseExtJsonl(text, { now: NOW }), 'import_empty');
      expect(error.message).toMatch(/no messages/);
    });

    it('accepts a legacy header with user_name and create_date, kept as written', () => {
      const header = { user_name: 'Ann', character_name: 'Bob', create_date: '2024-7-12@01h31m37s' };
      const text = [header, user('hi')].map((l) => JSON.stringify(l)).join('\n');
      const parsed = parseExtJsonl(text, { now: NOW });
      expect(parsed.header).toEqual(header);
      expect(JSON.parse(serializeExtJsonl(parsed, NAMES).split('\n')[0])).toEqual(header);
    });
  });

  describe('bounds (hostile files within the size limit)', () => {
    const { maxSkippedLines, charsPerPage, pagesBase, copiedCharsPerChar, copiedCharsBase } =
      EXT_JSONL_LIMITS;
    /** `text` padded with a blank line to exactly `length` characters. */
    const padTo = (text: string, length: number) => {
      expect(length).toBeGreaterThan(text.length);
      return `${text}\n${' '.repeat(length - text.length - 1)}`;
    };

    it(`skips ${maxSkippedLines} malformed lines and refuses a file with one more`, () => {
      const malformed = (n: number) =>
        [JSON.stringify(HEADER), JSON.stringify(user('hi')), ...Array<string>(n).fill('{x'), 'x'].join('\n');
      // `x` lines never reach JSON.parse (only `{` can start an object), but still count.
      const parsed = parseExtJsonl(malformed(maxSkippedLines - 1), { now: NOW });
      expect(parsed.counts).toMatchObject({ skipped_lines: maxSkippedLines, message_count: 1 });
      const error = expectParseError(
        () => parseExtJsonl(malformed(maxSkippedLines), { now: NOW }),
        /more than 10000 malformed lines/,
      );
      expect(error.details).toEqual({ line: maxSkippedLines + 3, max_skipped_lines: maxSkippedLines });
    });

    it('makes at most one page per 64 characters of the file + 10,000', () => {
      const maxPages = pagesBase + 2_000;
      const length = (maxPages - pagesBase) * charsPerPage;
      const swipes = (n: number) =>
        padTo(file(bot('', { swipes: Array<string>(n).fill(''), swipe_id: 0 })), length);
      const parsed = parseExtJsonl(swipes(maxPages), { now: NOW });
      expect(parsed.counts).toMatchObject({ message_count: maxPages, swipe_count: maxPages - 1 });
      const error = expectParseError(
        () => parseExtJsonl(swipes(maxPages + 1), { now: NOW }),
        /makes more than 12000 pages/,
      );
      expect(error.details).toEqual({ line: 2, max_pages: maxPages });
      // One page per line counts the same way (11-character lines: real ST lines are far longer).
      const maxLines = pagesBase + 2_500;
      const lines = (n: number) =>
        padTo(
          [JSON.stringify(HEADER), ...Array<string>(n).fill('{"mes":"a"}')].join('\n'),
          (maxLines - pagesBase) * charsPerPage,
        );
      expect(parseExtJsonl(lines(maxLines), { now: NOW }).counts.message_count).toBe(maxLines);
      expectParseError(() => parseExtJsonl(lines(maxLines + 1), { now: NOW }), /makes more than 12500 pages/);
    });

    it("copies a line's fields into each swipe page up to 2 x the file + 4 MiB characters, then refuses", () => {
      const swipeCount = 50;
      const line = (size: number) =>
        bot('', {
          swipes: Array<string>(swipeCount).fill(''),
          swipe_id: 0,
          extra: { big: 'x'.repeat(size) },
        });
      // The line's other fields: what `bot` sets besides name, is_user and mes (swipes and swipe_id go).
      const restChars = (size: number) =>
        JSON.stringify({ send_date: '2026-11-21T21:19:57.578Z', extra: { big: 'x'.repeat(size) } }).length;
      // The first page keeps the line's own fields; each other page gets a copy.
      let size = 100_000;
      const copied = () => restChars(size) * (swipeCount - 1);
      while ((copied() - copiedCharsBase) % copiedCharsPerChar !== 0) size++;
      const length = (copied() - copiedCharsBase) / copiedCharsPerChar; // budget == copies exactly
      const parsed = parseExtJsonl(padTo(file(line(size)), length), { now: NOW });
      expect(parsed.counts.message_count).toBe(swipeCount);
      const lines = parsed.floors[0].pages.map((page) => page.messages[0].extra.ext_jsonl.line);
      expect(new Set(lines).size).toBe(swipeCount); // no page shares the object of another
      for (const copy of lines)
        expect(copy).toEqual({ send_date: '2026-11-21T21:19:57.578Z', extra: { big: 'x'.repeat(size) } });
      const error = expectParseError(
        () => parseExtJsonl(padTo(file(line(size + 1)), length), { now: NOW }),
        /its 50 swipes would copy its other fields past/,
      );
      expect(error.details).toEqual({ line: 2, max_copied_chars: copied() });
    });
  });

  it('keeps macros as text', () => {
    const parsed = parseExtJsonl(file(user('I am {{user}} {{getvar::x}}'), bot('{{char}} waves')), {
      now: NOW,
    });
    expect(shape(parsed)).toEqual([
      ['input:user:I am {{user}} {{getvar::x}}*', 'output:assistant:{{char}} waves*'],
    ]);
  });

  describe('export of Hearth floors', () => {
    const at = Date.UTC(2026, 10, 22, 10, 0, 0);
    const msg = (role: string, content: string, more: Record<string, unknown> = {}) => ({
      seq: 0,
      role: role as 'user',
      content,
      is_hidden: false,
      created_at: at,
      ...more,
    });
    const floors: ExtJsonlExportFloor[] = [
      {
        pages: [
          { page_kind: 'greeting', is_active: true, version: 1, messages: [msg('assistant', 'Hi {{user}}')] },
        ],
      },
      {
        pages: [
          { page_kind: 'input', is_active: true, version: 1, messages: [msg('user', 'hello')] },
          { page_kind: 'output', is_active: false, version: 1, messages: [msg('assistant', 'first')] },
          {
            page_kind: 'output',
            is_active: true,
            version: 2,
            messages: [
              msg('tool', '{"ok":true}'),
              msg('assistant', 'second', { seq: 1, created_at: at + 5 }),
            ],
          },
        ],
      },
      {
        pages: [{ page_kind: 'output', is_active: true, version: 1, messages: [msg('system', 'It rains.')] }],
      },
      {
        pages: [
          { page_kind: 'output', is_active: true, version: 1, messages: [msg('narrator', 'Thunder.')] },
        ],
      },
      {
        pages: [
          {
            page_kind: 'input',
            is_active: true,
            version: 1,
            messages: [msg('user', 'psst', { is_hidden: true })],
          },
          {
            page_kind: 'output',
            is_active: true,
            version: 1,
            messages: [msg('assistant', 'ok', { name: 'Other' })],
          },
        ],
      },
    ];
    const text = serializeExtJsonl({ floors }, NAMES);
    const lines = text.split('\n').map((l) => JSON.parse(l));

    it('writes a new ST 1.18 header and no trailing newline', () => {
      expect(lines[0]).toEqual(HEADER);
      expect(text.endsWith('\n')).toBe(false);
      expect(lines).toHaveLength(8);
    });

    it('writes lines as ST 1.18 does, swipes merged, tool messages left out', () => {
      const iso = new Date(at).toISOString();
      expect(lines.slice(1)).toEqual([
        {
          name: 'Macro Mage',
          is_user: false,
          is_system: false,
          send_date: iso,
          mes: 'Hi {{user}}',
          extra: {},
        },
        {
          name: 'User',
          is_user: true,
          is_system: false,
          send_date: iso,
          mes: 'hello',
          extra: { isSmallSys: false },
        },
        {
          name: 'Macro Mage',
          is_user: false,
          is_system: false,
          send_date: new Date(at + 5).toISOString(),
          mes: 'second',
          extra: {},
          swipes: ['first', 'second'],
          swipe_id: 1,
          swipe_info: [
            { send_date: iso, extra: {} },
            { send_date: new Date(at + 5).toISOString(), extra: {} },
          ],
        },
        {
          name: ST_NARRATOR_NAME,
          is_user: false,
          is_system: '',
          send_date: iso,
          mes: 'It rains.',
          extra: { type: 'narrator' },
          swipes: ['It rains.'],
          swipe_id: 0,
          swipe_info: [{ send_date: iso, extra: {} }],
        },
        expect.objectContaining({
          name: ST_NARRATOR_NAME,
          is_system: '',
          mes: 'Thunder.',
          extra: { type: 'narrator' },
        }),
        {
          name: 'User',
          is_user: true,
          is_system: true,
          send_date: iso,
          mes: 'psst',
          extra: { isSmallSys: false },
        },
        expect.objectContaining({ name: 'Other', is_user: false, mes: 'ok', swipes: ['ok'] }),
      ]);
    });

    it('imports back with roles, hidden flags and active pages (the narrator role becomes system)', () => {
      expect(shape(parseExtJsonl(text, { now: NOW }))).toEqual([
        ['greeting:assistant:Hi {{user}}*'],
        ['input:user:hello*', 'output:assistant:first', 'output:assistant:second*'],
        ['output:system:It rains.*'],
        ['output:system:Thunder.*'],
        ['input:user:psst~*', 'output:assistant:ok*'],
      ]);
    });

    it('writes the active page of a floor whose pages hold several messages, one line each', () => {
      const multi = serializeExtJsonl(
        {
          floors: [
            {
              pages: [
                { page_kind: 'output', is_active: false, version: 1, messages: [msg('assistant', 'old')] },
                {
                  page_kind: 'output',
                  is_active: true,
                  version: 2,
                  messages: [msg('assistant', 'b', { seq: 1 }), msg('assistant', 'a', { seq: 0 })],
                },
              ],
            },
          ],
        },
        NAMES,
      );
      expect(
        multi
          .split('\n')
          .slice(1)
          .map((l) => [JSON.parse(l).mes, 'swipes' in JSON.parse(l)]),
      ).toEqual([
        ['a', false],
        ['b', false],
      ]);
    });

    it('treats an extra without a usable ext_jsonl capture as a new message', () => {
      const garbled = serializeExtJsonl(
        {
          floors: [
            {
              pages: [
                {
                  page_kind: 'input',
                  is_active: true,
                  version: 1,
                  messages: [msg('user', 'a', { extra: { ext_jsonl: 'x' } })],
                },
                {
                  page_kind: 'output',
                  is_active: true,
                  version: 1,
                  messages: [msg('assistant', 'b', { extra: { ext_jsonl: { line: [] } } })],
                },
              ],
            },
          ],
        },
        NAMES,
      );
      const [, userLine, botLine] = garbled.split('\n').map((l) => JSON.parse(l));
      expect(userLine).toEqual({
        name: 'User',
        is_user: true,
        is_system: false,
        send_date: new Date(at).toISOString(),
        mes: 'a',
        extra: { isSmallSys: false },
      });
      expect(botLine).toMatchObject({ name: 'Macro Mage', mes: 'b', swipes: ['b'], swipe_id: 0 });
    });

    it('writes nothing but the header for floors without exportable messages', () => {
      const empty = serializeExtJsonl(
        {
          floors: [
            { pages: [{ page_kind: 'output', is_active: true, version: 1, messages: [msg('tool', 'x')] }] },
          ],
        },
        NAMES,
      );
      expect(empty.split('\n')).toHaveLength(1);
    });
  });
});
