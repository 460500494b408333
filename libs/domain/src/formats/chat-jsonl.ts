import { DomainError } from '../errors';
import { jsonNestedDeeperThan } from '../text/json-depth';
import { toStorableJson } from '../text/storable-text';
import { importJsonTooDeep, importParseError, isPlainObject, JsonObject } from './format.rules';
import { parseSendDate } from './chat-send-date';
import { pageChecksum } from './nchat';

/**
 * SillyTavern's line-based chat file, `ext_jsonl` (spec 3 "Chat file formats", "Imports" grouping rules;
 * external-formats.md §a and §j). Parsing turns the file into a storage-ready tree of floors, pages and
 * messages; serializing writes a tree back as ST 1.18 writes chats. Text is never touched: macros stay as
 * text (a greeting's page holds the unexpanded swipe; the expanded `mes` ST stored is kept for export).
 *
 * Every imported message keeps what the tree has no column for in `extra.ext_jsonl` (the line's other
 * fields, its swipe's `swipe_info`, ...), so an imported file exports back field by field. Export:
 * chat-jsonl-export.ts; `send_date` formats: chat-send-date.ts.
 */

export type ChatMessageRole = 'user' | 'assistant' | 'system';
export type ChatPageKind = 'input' | 'output' | 'greeting';

/** What an imported message keeps of its ST line (message `extra.ext_jsonl`). */
export interface ExtJsonlCapture {
  /** The line's fields other than `name`, `is_user`, `mes` and (when valid) `swipes`/`swipe_id`/`swipe_info`, raw. */
  line: JsonObject;
  /** 0-based index of this page's text in the line's `swipes`; absent when the line had no swipes. */
  swipe_index?: number;
  /** True on the page of the swipe the line had selected (`swipe_id`). */
  selected?: boolean;
  /** This swipe's `swipe_info` item, raw; absent when the line had none for it. */
  swipe_info?: unknown;
  /** The line's `mes` when it differed from the selected swipe's text (`for_content`), e.g. an expanded greeting. */
  mes?: { text: string; for_content: string };
}

export interface ParsedChatMessage {
  seq: number;
  role: ChatMessageRole;
  content: string;
  /** ST's `is_system: true`: kept in the transcript, never sent to the model. */
  is_hidden: boolean;
  source: 'import';
  /** The line's speaker name (`name`), or null. */
  name: string | null;
  content_format: 'text';
  created_at: number;
  extra: { ext_jsonl: ExtJsonlCapture };
}

export interface ParsedChatPage {
  page_no: number;
  page_kind: ChatPageKind;
  is_active: boolean;
  /** 1..n per kind within the floor (swipe order). */
  version: number;
  checksum: string;
  messages: ParsedChatMessage[];
}

export interface ParsedChatFloor {
  floor_no: number;
  pages: ParsedChatPage[];
}

export interface ExtJsonlCounts {
  floor_count: number;
  /** Stored messages: one per page (every swipe is a page with one message). */
  message_count: number;
  /** Alternative swipes imported: pages of a line other than its selected swipe. */
  swipe_count: number;
  /** Message lines that were not JSON objects with a string `mes`. */
  skipped_lines: number;
  /** Message lines imported. */
  line_count: number;
}

export interface ParsedExtJsonl {
  /** The header line (`chat_metadata`, `user_name`, `character_name`, unknown fields), raw. */
  header: JsonObject;
  floors: ParsedChatFloor[];
  counts: ExtJsonlCounts;
  warnings: string[];
}

export interface ExtJsonlParseOptions {
  /** Unix ms used for a message whose `send_date` is missing or unparseable. */
  now: number;
}

const MAX_LISTED_LINES = 20;

/**
 * Bounds of an `ext_jsonl` import (not in ST; a hostile file within the route's size limit must not hold
 * the event loop for seconds, see docs/decisions.md "Chat import and export"). Past each, the file is
 * refused with 400 `import_parse_error` (`details.line` and the bound) before the work is done:
 * - `maxSkippedLines` malformed message lines: each line that is not JSON costs a thrown `JSON.parse`
 *   (~9 µs; 1,000,000 one-character lines took 16 s). Lines not starting with `{` skip the parse;
 * - pages (stored messages: a line's swipes each make one) at most one per `charsPerPage` characters of
 *   the file plus `pagesBase`: a page costs ~10 µs here and more to store, and a swipe can be 3 characters
 *   (`"",`: 400,000 empty swipes took 4.5 s; a 5 MB file holds 1,600,000). ST writes a `swipe_info` item
 *   per swipe, so real pages take well over 100 characters of the file;
 * - copies of line fields: every page of a line keeps the line's other fields (`extra.ext_jsonl.line`),
 *   so a line with many swipes and large fields stores them once per swipe (1,000 swipes beside a 4 MB
 *   `extra` took 89 s). The copies beyond each line's own fields may total at most `copiedCharsPerChar`
 *   x the file's length + `copiedCharsBase` characters (their JSON text).
 */
export const EXT_JSONL_LIMITS = Object.freeze({
  maxSkippedLines: 10_000,
  charsPerPage: 64,
  pagesBase: 10_000,
  copiedCharsPerChar: 2,
  copiedCharsBase: 4 * 1024 * 1024,
});

/**
 * Parses an `ext_jsonl` file. Throws 400 `import_parse_error` when the header line is not a JSON chat header,
 * 400 `import_empty` when no message line can be imported. Malformed message lines are skipped and counted.
 * Text Postgres cannot store (NUL, an unpaired surrogate: a broken emoji) becomes U+FFFD in the lines kept.
 */
export function parseExtJsonl(text: string, options: ExtJsonlParseOptions): ParsedExtJsonl {
  const lines = new LineReader(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  let headerText: string | null = null;
  while (headerText === null && lines.next()) if (lines.text.trim() !== '') headerText = lines.text;
  if (headerText === null) throw importEmpty();
  const header = parseHeader(headerText);

  const maxCopiedChars = EXT_JSONL_LIMITS.copiedCharsPerChar * text.length + EXT_JSONL_LIMITS.copiedCharsBase;
  const maxPages = Math.floor(text.length / EXT_JSONL_LIMITS.charsPerPage) + EXT_JSONL_LIMITS.pagesBase;
  const builder = new FloorBuilder(options.now, maxCopiedChars, maxPages);
  const skipped: number[] = [];
  while (lines.next()) {
    if (lines.text.trim() === '') continue;
    const line = parseMessageLine(lines.text, lines.lineNo);
    if (!line) {
      skipped.push(lines.lineNo);
      if (skipped.length > EXT_JSONL_LIMITS.maxSkippedLines) throw tooManySkippedLines(skipped);
      continue;
    }
    builder.add(line, lines.lineNo);
  }
  if (builder.lineCount === 0) throw importEmpty();

  const warnings = [...builder.warnings];
  if (skipped.length > 0) {
    const listed = skipped.slice(0, MAX_LISTED_LINES).join(', ');
    warnings.unshift(
      `skipped ${skipped.length} malformed line(s): ${listed}${skipped.length > MAX_LISTED_LINES ? ', ...' : ''}`,
    );
  }
  if (builder.undatedLines.length > 0) {
    warnings.push(
      `${builder.undatedLines.length} line(s) without a readable send_date got the import time: ` +
        builder.undatedLines.slice(0, MAX_LISTED_LINES).join(', ') +
        (builder.undatedLines.length > MAX_LISTED_LINES ? ', ...' : ''),
    );
  }
  const messageCount = builder.floors.reduce(
    (sum, floor) => sum + floor.pages.reduce((n, page) => n + page.messages.length, 0),
    0,
  );
  return {
    header,
    floors: builder.floors,
    counts: {
      floor_count: builder.floors.length,
      message_count: messageCount,
      swipe_count: builder.swipeCount,
      skipped_lines: skipped.length,
      line_count: builder.lineCount,
    },
    warnings,
  };
}

/**
 * The lines of a text as `split(/\r?\n/)` gives them, one at a time (a file refused after its first lines
 * is not split whole first).
 */
class LineReader {
  text = '';
  /** 1-based number of the current line. */
  lineNo = 0;
  private position = 0;

  constructor(private readonly body: string) {}

  next(): boolean {
    if (this.position > this.body.length) return false;
    const found = this.body.indexOf('\n', this.position);
    const newline = found < 0 ? this.body.length : found;
    const crlf = found > this.position && this.body.charCodeAt(found - 1) === 0x0d;
    const end = crlf ? newline - 1 : newline;
    this.text = this.body.slice(this.position, end);
    this.lineNo++;
    this.position = newline + 1;
    return true;
  }
}

function tooManySkippedLines(skipped: number[]): DomainError {
  const max = EXT_JSONL_LIMITS.maxSkippedLines;
  return importParseError(
    `the chat file has more than ${max} malformed lines (not JSON objects with a string mes): ` +
      `${skipped.slice(0, MAX_LISTED_LINES).join(', ')}, ...`,
    { line: skipped[skipped.length - 1], max_skipped_lines: max },
  );
}

function importEmpty(): DomainError {
  return new DomainError('import_empty', 400, 'the chat file has no messages');
}

/** ST's import check: the first line is a JSON object with any of `user_name`, `name`, `chat_metadata`. */
function parseHeader(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw importParseError(`chat header line is not valid JSON: ${(error as Error).message}`, { line: 1 });
  }
  if (jsonNestedDeeperThan(value)) throw importJsonTooDeep('chat header line', { line: 1 });
  if (!isPlainObject(value) || !('user_name' in value || 'name' in value || 'chat_metadata' in value)) {
    throw importParseError('chat header line must be an object with chat_metadata, user_name or name', {
      line: 1,
    });
  }
  return toStorableJson(value);
}

/** A message line, or null when it is not a JSON object with a string `mes` (skipped and counted). */
function parseMessageLine(text: string, lineNo: number): JsonObject | null {
  // Only text starting with `{` (after JSON whitespace) can parse to an object: other lines are skipped
  // without a JSON.parse, whose throw costs ~9 µs a line.
  if (!startsLikeObject(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(value) || typeof value.mes !== 'string') return null;
  // Readable but too deep to copy and store: the file is refused, not silently cut.
  if (jsonNestedDeeperThan(value)) throw importJsonTooDeep(`chat line ${lineNo}`, { line: lineNo });
  return toStorableJson(value);
}

function startsLikeObject(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b) return true; // {
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return false;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');
}

function roleOf(line: JsonObject): ChatMessageRole {
  if (line.is_user === true) return 'user';
  return isPlainObject(line.extra) && line.extra.type === 'narrator' ? 'system' : 'assistant';
}

/** Groups message lines into floors (spec 3 "Grouping rules"; docs/decisions.md "Chat files"). */
class FloorBuilder {
  readonly floors: ParsedChatFloor[] = [];
  readonly warnings: string[] = [];
  readonly undatedLines: number[] = [];
  lineCount = 0;
  swipeCount = 0;
  /** Characters of line-field copies made so far, and pages (see EXT_JSONL_LIMITS). */
  private copiedChars = 0;
  private pageCount = 0;

  constructor(
    private readonly now: number,
    private readonly maxCopiedChars: number,
    private readonly maxPages: number,
  ) {}

  add(line: JsonObject, lineNo: number): void {
    const first = this.lineCount === 0;
    this.lineCount++;
    const role = roleOf(line);
    if (role === 'user') {
      this.floors.push({ floor_no: this.floors.length, pages: [] });
      this.addPages(this.current(), [this.singlePage(line, lineNo, role)], 'input');
      return;
    }
    const pages = this.swipePages(line, lineNo, role);
    if (first && role === 'assistant') {
      this.floors.push({ floor_no: this.floors.length, pages: [] });
      this.addPages(this.current(), pages, 'greeting');
      return;
    }
    const current = this.floors.at(-1);
    const open = current && current.pages.every((page) => page.page_kind === 'input');
    if (!current || !open) this.floors.push({ floor_no: this.floors.length, pages: [] });
    this.addPages(this.current(), pages, 'output');
  }

  private current(): ParsedChatFloor {
    return this.floors[this.floors.length - 1];
  }

  private addPages(
    floor: ParsedChatFloor,
    pages: Array<{ message: ParsedChatMessage; active: boolean }>,
    kind: ChatPageKind,
  ): void {
    pages.forEach(({ message, active }, i) => {
      const messages = [message];
      floor.pages.push({
        page_no: floor.pages.length,
        page_kind: kind,
        is_active: active,
        version: i + 1,
        checksum: pageChecksum(messages),
        messages,
      });
    });
  }

  private singlePage(line: JsonObject, lineNo: number, role: ChatMessageRole) {
    const { name: _name, is_user: _isUser, mes, ...rest } = line;
    this.countPages(1, lineNo);
    return {
      message: this.message(line, role, mes as string, this.dateOf(line.send_date, lineNo), { line: rest }),
      active: true,
    };
  }

  private countPages(pages: number, lineNo: number): void {
    this.pageCount += pages;
    if (this.pageCount > this.maxPages) {
      throw importParseError(
        `chat line ${lineNo}: the file makes more than ${this.maxPages} pages (messages and swipes; ` +
          'at most one per 64 characters of the file + 10,000)',
        { line: lineNo, max_pages: this.maxPages },
      );
    }
  }

  /**
   * The line's other fields for each of its `pages` pages: the first page keeps `rest` itself (this
   * parse's own object), every other one a copy, parsed from one serialisation; the copies are counted
   * against the file's budget before any is made.
   */
  private lineCopies(rest: JsonObject, pages: number, lineNo: number): JsonObject[] {
    this.countPages(pages, lineNo);
    if (pages === 1) return [rest];
    const restText = JSON.stringify(rest);
    this.copiedChars += restText.length * (pages - 1);
    if (this.copiedChars > this.maxCopiedChars) {
      throw importParseError(
        `chat line ${lineNo}: its ${pages} swipes would copy its other fields past ${this.maxCopiedChars} ` +
          'characters for the file (2 x its length + 4 MiB)',
        { line: lineNo, max_copied_chars: this.maxCopiedChars },
      );
    }
    const copies = [rest];
    for (let i = 1; i < pages; i++) copies.push(JSON.parse(restText) as JsonObject);
    return copies;
  }

  /** One page per swipe (`swipes`), the selected one (`swipe_id`) active; a line without swipes is one page. */
  private swipePages(line: JsonObject, lineNo: number, role: ChatMessageRole) {
    if (!isStringArray(line.swipes)) return [this.singlePage(line, lineNo, role)];
    const {
      name: _name,
      is_user: _isUser,
      mes,
      swipes,
      swipe_id: _swipeId,
      swipe_info: swipeInfo,
      ...rest
    } = line;
    const texts = swipes as string[];
    let selected = line.swipe_id;
    if (
      typeof selected !== 'number' ||
      !Number.isInteger(selected) ||
      selected < 0 ||
      selected >= texts.length
    ) {
      const byText = texts.indexOf(mes as string);
      selected = byText >= 0 ? byText : 0;
      this.warnings.push(`line ${lineNo}: swipe_id is not an index of swipes; swipe ${selected} is active`);
    }
    const infos = Array.isArray(swipeInfo) ? swipeInfo : undefined;
    if (swipeInfo !== undefined && !infos) rest.swipe_info = swipeInfo;
    const lineDate = this.dateOf(line.send_date, lineNo);
    this.swipeCount += texts.length - 1;
    const lineCopies = this.lineCopies(rest, texts.length, lineNo);
    return texts.map((text, i) => {
      const capture: ExtJsonlCapture = {
        line: lineCopies[i],
        swipe_index: i,
        selected: i === selected,
      };
      if (infos && i < infos.length) capture.swipe_info = infos[i];
      if (i === selected && mes !== text) capture.mes = { text: mes as string, for_content: text };
      const info = capture.swipe_info;
      const infoDate = isPlainObject(info) ? parseSendDate(info.send_date) : null;
      const createdAt = i === selected ? lineDate : (infoDate ?? lineDate);
      return { message: this.message(line, role, text, createdAt, capture), active: i === selected };
    });
  }

  private message(
    line: JsonObject,
    role: ChatMessageRole,
    content: string,
    createdAt: number,
    capture: ExtJsonlCapture,
  ): ParsedChatMessage {
    return {
      seq: 0,
      role,
      content,
      is_hidden: line.is_system === true,
      source: 'import',
      name: typeof line.name === 'string' ? line.name : null,
      content_format: 'text',
      created_at: createdAt,
      // `capture` is this message's own: the parsed line's fields (or a copy) and its swipe_info item.
      extra: { ext_jsonl: capture },
    };
  }

  private dateOf(value: unknown, lineNo: number): number {
    const parsed = parseSendDate(value);
    if (parsed !== null) return parsed;
    this.undatedLines.push(lineNo);
    return this.now;
  }
}
