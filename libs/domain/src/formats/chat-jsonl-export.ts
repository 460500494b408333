import type { AuthorsNote } from '../prompt/engine/authors-note';
import { cloneJson, isPlainObject, JsonObject } from './format.rules';
import type { ChatMessageRole, ChatPageKind, ExtJsonlCapture } from './chat-jsonl';
import { withAuthorsNote } from './chat-jsonl-note';

/**
 * Export of chats to SillyTavern's line-based file, `ext_jsonl` (spec 3 "Exports"; external-formats.md
 * §a): what ST 1.18 writes, and for imported messages every field their line had (see chat-jsonl.ts).
 */

/** A message to export: a stored message (any role) with what its import captured in `extra`. */
export interface ExtJsonlExportMessage {
  seq?: number;
  role: ChatMessageRole | 'narrator' | 'tool';
  content: string;
  is_hidden: boolean;
  /** Speaker name; null or absent: the user's, the character's or `System` by role. */
  name?: string | null;
  created_at: number;
  extra?: unknown;
}

export interface ExtJsonlExportPage {
  page_no?: number;
  page_kind: ChatPageKind;
  is_active: boolean;
  version: number;
  messages: ExtJsonlExportMessage[];
}

export interface ExtJsonlExportFloor {
  pages: ExtJsonlExportPage[];
}

export interface ExtJsonlExportInput {
  /** The header captured at import, written unchanged; absent: a new ST 1.18 header. */
  header?: JsonObject | null;
  /**
   * The chat's author's note as the session stores it: its set keys overlay the header's
   * `chat_metadata.note_*` (a new header gets them too); unset keys leave the header as it was.
   */
  authors_note?: Partial<AuthorsNote> | null;
  /** Live committed floors of the exported branch, oldest first (the caller filters). */
  floors: ExtJsonlExportFloor[];
}

export interface ExtJsonlExportOptions {
  /** Name for user lines without a name of their own. */
  user_name: string;
  /** Name for character lines without a name of their own. */
  character_name: string;
}

/** ST's name for `/sys` narrator lines. */
export const ST_NARRATOR_NAME = 'System';

/**
 * Writes the file text: the header line, then one line per message, without a trailing newline (as ST
 * does). The pages of one kind in a floor merge into one line with `swipes`, `swipe_id` (the active page)
 * and `swipe_info`; imported lines get back every field they had. Tool messages are not written (ST
 * chats have no tool lines); `narrator` and `system` messages become ST narrator lines.
 */
export function serializeExtJsonl(input: ExtJsonlExportInput, options: ExtJsonlExportOptions): string {
  const header = withAuthorsNote(
    input.header
      ? cloneJson(input.header)
      : { chat_metadata: {}, user_name: 'unused', character_name: 'unused' },
    input.authors_note,
  );
  const out: string[] = [JSON.stringify(header)];
  for (const floor of input.floors) {
    for (const kind of ['greeting', 'input', 'output'] as const) {
      const pages = floor.pages
        .filter((page) => page.page_kind === kind)
        .map((page) => ({ page, messages: exportableMessages(page) }))
        .filter(({ messages }) => messages.length > 0)
        .sort((a, b) => a.page.version - b.page.version || (a.page.page_no ?? 0) - (b.page.page_no ?? 0));
      if (pages.length === 0) continue;
      let active = pages.findIndex(({ page }) => page.is_active);
      if (active < 0) active = pages.length - 1;
      if (kind !== 'input' && pages.every(({ messages }) => messages.length === 1)) {
        out.push(
          JSON.stringify(
            swipeLine(
              pages.map(({ messages }) => messages[0]),
              active,
              kind,
              options,
            ),
          ),
        );
      } else {
        for (const message of pages[active].messages) out.push(JSON.stringify(plainLine(message, options)));
      }
    }
  }
  return out.join('\n');
}

function exportableMessages(page: ExtJsonlExportPage): ExtJsonlExportMessage[] {
  return page.messages
    .filter((message) => message.role !== 'tool')
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
}

/** The capture an import left in a message's `extra`, when it has the expected shape. */
export function extJsonlCaptureOf(message: { extra?: unknown }): ExtJsonlCapture | undefined {
  const extra = message.extra;
  if (!isPlainObject(extra) || !isPlainObject(extra.ext_jsonl)) return undefined;
  const capture = extra.ext_jsonl;
  if (!isPlainObject(capture.line)) return undefined;
  return capture as unknown as ExtJsonlCapture;
}

/** A line without swipes (user lines, and every message of a multi-message page). */
function plainLine(message: ExtJsonlExportMessage, options: ExtJsonlExportOptions): JsonObject {
  return buildLine(message, extJsonlCaptureOf(message), options);
}

/** One line for the pages (swipes) of one kind of a floor, each with one message. */
function swipeLine(
  messages: ExtJsonlExportMessage[],
  active: number,
  kind: ChatPageKind,
  options: ExtJsonlExportOptions,
): JsonObject {
  const message = messages[active];
  const capture = extJsonlCaptureOf(message);
  const captures = messages.map((m) => extJsonlCaptureOf(m));
  const withSwipes = messages.length > 1 || (capture ? capture.swipe_index !== undefined : kind === 'output');
  if (!withSwipes) return buildLine(message, capture, options);

  const info = capture?.selected === false ? capture.swipe_info : undefined;
  const line = buildLine(message, capture, options, isPlainObject(info) ? info : undefined);
  delete line.swipe_id;
  delete line.swipes;
  line.swipes = messages.map((m) => m.content);
  line.swipe_id = active;
  // ST 1.18 writes swipe_info; only a line imported with swipes but without swipe_info stays without.
  const withInfo = !captures.every((c) => c?.swipe_index !== undefined && !('swipe_info' in c));
  if (withInfo) {
    delete line.swipe_info;
    line.swipe_info = messages.map((m, i) => {
      const c = captures[i];
      return c && 'swipe_info' in c
        ? cloneJson(c.swipe_info)
        : { send_date: isoDate(m.created_at), extra: {} };
    });
  }
  return line;
}

const SWIPE_INFO_OVERLAY = ['send_date', 'gen_started', 'gen_finished', 'extra'] as const;

/**
 * The line of a message: imported ones get their captured fields back (the expanded `mes` while the
 * content is unchanged, `is_system` as written while it still says the same); new ones get ST 1.18's
 * fields. `overlay`: the `swipe_info` of a swipe that became active after import (its dates and extra).
 */
function buildLine(
  message: ExtJsonlExportMessage,
  capture: ExtJsonlCapture | undefined,
  options: ExtJsonlExportOptions,
  overlay?: JsonObject,
): JsonObject {
  const role = message.role === 'narrator' ? 'system' : message.role;
  const captured = capture ? cloneJson(capture.line) : undefined;
  const line: JsonObject = {};
  line.name = message.name ?? defaultName(role, options);
  line.is_user = role === 'user';
  if (captured && 'is_system' in captured && (captured.is_system === true) === message.is_hidden) {
    line.is_system = captured.is_system;
  } else if (!captured || 'is_system' in captured || message.is_hidden) {
    line.is_system = message.is_hidden ? true : role === 'system' ? '' : false;
  }
  if (captured) {
    if ('send_date' in captured) line.send_date = captured.send_date;
  } else {
    line.send_date = isoDate(message.created_at);
  }
  const mes = capture?.mes;
  line.mes = mes && mes.for_content === message.content ? mes.text : message.content;
  if (captured) {
    if ('extra' in captured) line.extra = captured.extra;
  } else {
    line.extra = role === 'user' ? { isSmallSys: false } : role === 'system' ? { type: 'narrator' } : {};
  }
  if (captured) {
    for (const [key, value] of Object.entries(captured)) if (!(key in line)) line[key] = value;
  }
  if (overlay) {
    for (const key of SWIPE_INFO_OVERLAY) if (key in overlay) line[key] = cloneJson(overlay[key]);
  }
  return line;
}

function defaultName(role: ChatMessageRole | 'tool', options: ExtJsonlExportOptions): string {
  if (role === 'user') return options.user_name;
  return role === 'system' ? ST_NARRATOR_NAME : options.character_name;
}

/** What ST ≥ 1.12.5 writes for dates: `new Date().toISOString()`. */
function isoDate(ms: number): string {
  return new Date(ms).toISOString();
}
