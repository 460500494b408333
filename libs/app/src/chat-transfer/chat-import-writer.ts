import {
  authorsNoteOfHeader,
  ID_PREFIX,
  importParseError,
  isPlainObject,
  newId,
  type JsonObject,
  pageChecksum,
  type NchatFloor,
  type NchatMemoryItem,
  type ParsedExtJsonl,
  type ParsedNchat,
} from '@hearth/domain';
import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import {
  chatTransferRepository,
  sessionPromptSettingsRepository,
  type BranchRow,
  type BranchesTable,
  type FloorLinesTable,
  type FloorsTable,
  type MessagesTable,
  type PagesTable,
  type SessionRow,
  type Tx,
  type VariablesTable,
} from '@hearth/persistence';
import type { Insertable } from 'kysely';
import { FLOOR_LINE_PREFIX } from '../conversation/floor-writes';
import { MESSAGE_TOKEN_ENCODING } from '../conversation/message-writes';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { validAuthorsNoteKeys } from '../prompt-settings/prompt-settings-rules';
import { VARIABLE_ID_PREFIX } from '../variables/variable-rules';
import { yieldToPendingIo } from '../turns/yield-to-pending-io';

/**
 * Writes a parsed chat file into a new session's tables inside the import's transaction: bulk inserts of
 * lines, branches, floors, pages, messages (token counts with o200k, checksums) and variables, then the
 * `chat_transfer_sessions` row with what the tables have no column for.
 */

type NewFloorRow = Insertable<FloorsTable>;
type NewPageRow = Insertable<PagesTable>;
type NewMessageRow = Insertable<MessagesTable>;

const json = (value: unknown) => JSON.stringify(value ?? null);

/**
 * Building the rows counts the tokens of every message (~1 µs a character: a 5 MB file is seconds of
 * work), so the loops let the I/O that has arrived meanwhile (other users' streams) run every
 * `YIELD_EVERY_MS` of work. Same rows, same order.
 */
const YIELD_EVERY_MS = 20;

function yielder(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < YIELD_EVERY_MS) return;
    await yieldToPendingIo();
    since = performance.now();
  };
}

// Math.min/max of a list without spreading it into arguments: a floor of one line's swipes can hold more
// pages than a call takes arguments (200,000 overflowed the stack). Empty: Infinity / -Infinity, as spread.
const minOf = (values: number[]) => values.reduce((min, v) => Math.min(min, v), Infinity);
const maxOf = (values: number[]) => values.reduce((max, v) => Math.max(max, v), -Infinity);

/**
 * `ext_jsonl`: the floors form one chain on `main` in one line (floor 0 ..), all `committed`; the
 * greeting floor gets metadata `{kind: 'greeting'}` like a session's own greeting.
 */
export async function writeExtJsonlImport(
  tx: Tx,
  session: SessionRow,
  main: BranchRow,
  parsed: ParsedExtJsonl,
): Promise<void> {
  const now = Date.now();
  const counter = tokenCounter(MESSAGE_TOKEN_ENCODING);
  const lineId = newId(FLOOR_LINE_PREFIX);
  const base = { account_id: session.account_id, session_id: session.id };
  const floors: NewFloorRow[] = [];
  const pages: NewPageRow[] = [];
  const messages: NewMessageRow[] = [];
  let parentId: string | null = null;
  const pause = yielder();
  for (const floor of parsed.floors) {
    await pause();
    const floorId = newId(ID_PREFIX.floor);
    const times = floor.pages.flatMap((page) => page.messages.map((m) => m.created_at));
    const activeTimes = floor.pages
      .filter((p) => p.is_active)
      .flatMap((p) => p.messages.map((m) => m.created_at));
    const createdAt = minOf(activeTimes.length > 0 ? activeTimes : times);
    const greeting = floor.pages.some((page) => page.page_kind === 'greeting');
    floors.push({
      ...base,
      id: floorId,
      branch_id: main.id,
      floor_no: floor.floor_no,
      parent_floor_id: parentId,
      line_id: lineId,
      state: 'committed',
      token_in: 0,
      token_out: 0,
      reasoning_text: null,
      metadata: json(greeting ? { kind: 'greeting' } : {}),
      state_snapshot: null,
      superseded_at: null,
      superseded_by_floor_id: null,
      created_at: createdAt,
      updated_at: maxOf(times),
    });
    for (const page of floor.pages) {
      const pageId = newId(ID_PREFIX.page);
      const pageTime = minOf(page.messages.map((m) => m.created_at));
      pages.push({
        ...base,
        id: pageId,
        floor_id: floorId,
        page_no: page.page_no,
        page_kind: page.page_kind,
        is_active: page.is_active,
        version: page.version,
        checksum: page.checksum,
        created_at: pageTime,
        updated_at: pageTime,
      });
      for (const message of page.messages) {
        messages.push({
          ...base,
          id: newId(ID_PREFIX.message),
          floor_id: floorId,
          page_id: pageId,
          seq: message.seq,
          role: message.role,
          content: message.content,
          content_format: message.content_format,
          is_hidden: message.is_hidden,
          source: message.source,
          token_count: counter.count(message.content),
          token_encoding: counter.encoding,
          name: message.name,
          extra: json(message.extra),
          created_at: message.created_at,
        });
      }
    }
    parentId = floorId;
  }
  await chatTransferRepository.insertLines(tx, [
    {
      ...base,
      id: lineId,
      parent_line_id: null,
      fork_floor_no: null,
      start_floor_no: 0,
      created_at: floors.length > 0 ? (floors[0].created_at as number) : now,
    },
  ]);
  await chatTransferRepository.insertFloors(tx, floors);
  await chatTransferRepository.insertPages(tx, pages);
  await chatTransferRepository.insertMessages(tx, messages);
  await chatTransferRepository.updateBranch(tx, main.id, {
    source_floor_id: null,
    head_floor_id: parentId,
    created_at: main.created_at,
    updated_at: now,
  });
  await chatTransferRepository.insertSessionData(tx, {
    ...base,
    import_format: 'ext_jsonl',
    ext_jsonl_header: json(parsed.header),
    memories: null,
    character_binding: null,
    created_at: now,
  });
}

/**
 * `ext_jsonl`: the header's author's note (ST `chat_metadata.note_*`) becomes the new session's
 * `authors_note` prompt settings (version 1, written by `updatedBy`): only the keys present with a value
 * the settings route accepts (a longer text, an interval or depth out of range, an unknown position or
 * role is left out, and the default applies). No row when no key qualifies. Returns the keys written.
 */
export async function writeImportedAuthorsNote(
  tx: Tx,
  session: SessionRow,
  parsed: ParsedExtJsonl,
  updatedBy: string,
): Promise<string[]> {
  const note = validAuthorsNoteKeys(authorsNoteOfHeader(parsed.header));
  const keys = Object.keys(note);
  if (keys.length === 0) return [];
  await sessionPromptSettingsRepository.insert(tx, {
    session_id: session.id,
    account_id: session.account_id,
    prompt_mode: null,
    macro_engine: null,
    post_processing: null,
    timezone: null,
    persona_position: null,
    persona_depth: null,
    persona_role: null,
    lorebook_settings: json({}),
    authors_note: json(note),
    version: 1,
    updated_at: Date.now(),
    updated_by: updatedBy,
  });
  return keys;
}

/**
 * `nchat`: every branch (the file's `main` becomes the session's `main`), floor, page, message, variable
 * and memory with new ids; every `*_ref` is rebuilt through `_original_id`. Lines are rebuilt from the
 * floor tree (a floor continues its parent's line when that slot is free, `main`'s floors first), so the
 * stored lineage index is valid whatever the file's `lines` said. `extras`: the speaker names and the ST
 * header the file carried outside the parsed shape.
 */
export async function writeNchatImport(
  tx: Tx,
  session: SessionRow,
  main: BranchRow,
  parsed: ParsedNchat,
  extras: NchatExtras,
): Promise<NchatImportIds> {
  const names = extras.names;
  const now = Date.now();
  const data = parsed.chat.data;
  const counter = tokenCounter(MESSAGE_TOKEN_ENCODING);
  const base = { account_id: session.account_id, session_id: session.id };

  const branchIds = new Map<string, string>();
  const fileMain = data.branches.find((branch) => branch.name === MAIN_BRANCH);
  for (const branch of data.branches) {
    branchIds.set(branch._original_id, branch === fileMain ? main.id : newId(ID_PREFIX.branch));
  }
  const floorIds = new Map(data.floors.map((floor) => [floor._original_id, newId(ID_PREFIX.floor)]));
  const pageIds = new Map<string, string>();
  const floorRef = (ref: string | null | undefined) => (ref ? floorIds.get(ref)! : null);

  // Lines: parents before children (floor_no order), the main branch's floors first at each floor_no.
  const order = data.floors
    .map((floor, index) => ({ floor, index }))
    .sort(
      (a, b) =>
        a.floor.floor_no - b.floor.floor_no ||
        Number(b.floor.branch_id_ref === fileMain?._original_id) -
          Number(a.floor.branch_id_ref === fileMain?._original_id) ||
        a.floor.created_at - b.floor.created_at ||
        a.index - b.index,
    )
    .map(({ floor }) => floor);
  const lineOf = new Map<string, string>();
  const taken = new Set<string>();
  const lines: Array<Insertable<FloorLinesTable>> = [];
  const byId = new Map(data.floors.map((floor) => [floor._original_id, floor]));
  for (const floor of order) {
    const parent = floor.parent_floor_id_ref ? byId.get(floor.parent_floor_id_ref)! : null;
    const parentLine = parent ? lineOf.get(parent._original_id)! : null;
    let lineId = parentLine;
    if (!lineId || taken.has(`${lineId}:${floor.floor_no}`)) {
      lineId = newId(FLOOR_LINE_PREFIX);
      lines.push({
        ...base,
        id: lineId,
        parent_line_id: parentLine,
        fork_floor_no: parentLine ? parent!.floor_no : null,
        start_floor_no: floor.floor_no,
        created_at: floor.created_at,
      });
    }
    taken.add(`${lineId}:${floor.floor_no}`);
    lineOf.set(floor._original_id, lineId);
  }

  const branches: Array<Insertable<BranchesTable>> = [];
  for (const branch of data.branches) {
    if (branch === fileMain) continue;
    branches.push({
      ...base,
      id: branchIds.get(branch._original_id)!,
      name: branch.name,
      source_floor_id: floorRef(branch.source_floor_id_ref),
      head_floor_id: floorRef(branch.head_floor_id_ref),
      created_at: branch.created_at,
      updated_at: branch.updated_at,
    });
  }

  const floors: NewFloorRow[] = [];
  const pages: NewPageRow[] = [];
  const messages: NewMessageRow[] = [];
  const pause = yielder();
  for (const floor of order) {
    await pause();
    floors.push(floorRow(floor));
  }
  function floorRow(floor: NchatFloor): NewFloorRow {
    const id = floorIds.get(floor._original_id)!;
    for (const page of floor.pages) {
      const pageId = newId(ID_PREFIX.page);
      pageIds.set(page._original_id, pageId);
      pages.push({
        ...base,
        id: pageId,
        floor_id: id,
        page_no: page.page_no,
        page_kind: page.page_kind,
        is_active: page.is_active,
        version: page.version,
        checksum: page.checksum ?? pageChecksum(page.messages),
        created_at: page.created_at,
        updated_at: page.updated_at,
      });
      for (const message of page.messages) {
        const counted = message.token_count === null;
        messages.push({
          ...base,
          id: newId(ID_PREFIX.message),
          floor_id: id,
          page_id: pageId,
          seq: message.seq,
          role: message.role,
          content: message.content,
          content_format: message.content_format,
          is_hidden: message.is_hidden,
          source: message.source,
          token_count: counted ? counter.count(message.content) : message.token_count,
          token_encoding: counted ? counter.encoding : message.token_encoding,
          name: names.get(message._original_id) ?? null,
          extra: message.extra === undefined ? null : json(message.extra),
          created_at: message.created_at,
        });
      }
    }
    return {
      ...base,
      id,
      branch_id: branchIds.get(floor.branch_id_ref)!,
      floor_no: floor.floor_no,
      parent_floor_id: floorRef(floor.parent_floor_id_ref),
      line_id: lineOf.get(floor._original_id)!,
      state: floor.state,
      token_in: floor.token_in,
      token_out: floor.token_out,
      reasoning_text: floor.reasoning_text,
      metadata: json(floor.metadata ?? {}),
      state_snapshot: floor.state_snapshot === null ? null : json(floor.state_snapshot),
      superseded_at: floor.superseded_at,
      superseded_by_floor_id: floorRef(floor.superseded_by_floor_id_ref),
      created_at: floor.created_at,
      updated_at: floor.updated_at,
    };
  }

  const variables: Array<Insertable<VariablesTable>> = (data.variables ?? []).map((variable) => {
    const row: Insertable<VariablesTable> = {
      id: newId(VARIABLE_ID_PREFIX.variable),
      account_id: session.account_id,
      scope: variable.scope,
      scope_id: session.id,
      session_id: session.id,
      branch_id: null,
      floor_id: null,
      page_id: null,
      key: variable.key,
      value: json(variable.value),
      created_at: variable.updated_at,
      updated_at: variable.updated_at,
    };
    if (variable.scope === 'branch') {
      row.branch_id = branchIds.get(variable.scope_id_ref!)!;
      row.scope_id = `${session.id}:${row.branch_id}`;
    } else if (variable.scope === 'floor') {
      row.floor_id = floorIds.get(variable.scope_id_ref!)!;
      row.scope_id = row.floor_id;
    } else if (variable.scope === 'page') {
      row.page_id = pageIds.get(variable.scope_id_ref!)!;
      row.scope_id = row.page_id;
    }
    return row;
  });

  await chatTransferRepository.insertLines(tx, lines);
  await chatTransferRepository.insertBranches(tx, branches);
  await chatTransferRepository.insertFloors(tx, floors);
  await chatTransferRepository.insertPages(tx, pages);
  await chatTransferRepository.insertMessages(tx, messages);
  try {
    await chatTransferRepository.insertVariables(tx, variables);
  } catch (error) {
    // The unique (account, scope, scope_id, key): the file names one variable twice. The transaction
    // is rolled back with everything written before.
    if ((error as { code?: unknown }).code === '23505') {
      throw importParseError('$.data.variables repeats a variable (same scope, host and key)', {
        path: '$.data.variables',
      });
    }
    throw error;
  }
  if (fileMain) {
    await chatTransferRepository.updateBranch(tx, main.id, {
      source_floor_id: floorRef(fileMain.source_floor_id_ref),
      head_floor_id: floorRef(fileMain.head_floor_id_ref),
      created_at: fileMain.created_at,
      updated_at: fileMain.updated_at,
    });
  }
  const memories = data.memories
    ? {
        items: data.memories.items.map((item) => storedMemoryItem(item, branchIds, floorIds)),
        edges: data.memories.edges,
      }
    : null;
  await chatTransferRepository.insertSessionData(tx, {
    ...base,
    import_format: 'nchat',
    ext_jsonl_header: extras.extJsonlHeader ? json(extras.extJsonlHeader) : null,
    memories: memories ? json(memories) : null,
    character_binding: data.character_binding ? json(data.character_binding) : null,
    created_at: now,
  });
  return { branchIds, floorIds, pageIds };
}

/** The new id of each branch, floor and page of an nchat import, by the file's `_original_id`. */
export interface NchatImportIds {
  branchIds: ReadonlyMap<string, string>;
  floorIds: ReadonlyMap<string, string>;
  pageIds: ReadonlyMap<string, string>;
}

/** A memory item with its branch and floor refs mapped to the stored ids (item ids stay the file's). */
function storedMemoryItem(
  item: NchatMemoryItem,
  branchIds: ReadonlyMap<string, string>,
  floorIds: ReadonlyMap<string, string>,
): NchatMemoryItem {
  const stored: NchatMemoryItem = { ...item };
  if (typeof item.branch_id_ref === 'string') stored.branch_id_ref = branchIds.get(item.branch_id_ref)!;
  if (typeof item.floor_id_ref === 'string') stored.floor_id_ref = floorIds.get(item.floor_id_ref)!;
  if (Array.isArray(item.covered_floor_id_refs)) {
    stored.covered_floor_id_refs = item.covered_floor_id_refs.map((ref) => floorIds.get(ref)!);
  }
  return stored;
}

/** What an nchat file carries beyond the parsed shape (Hearth writes both; other files may not). */
export interface NchatExtras {
  /** Speaker names of messages (`name`), by message `_original_id`. */
  names: Map<string, string>;
  /** `data.ext_jsonl_header`: the ST header of a chat first imported from `ext_jsonl`. */
  extJsonlHeader: JsonObject | null;
}

/** Reads the extras of an nchat file that `parseNchat` has already checked. */
export function nchatExtras(text: string): NchatExtras {
  const names = new Map<string, string>();
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const root: unknown = JSON.parse(body);
  const data = isPlainObject(root) && isPlainObject(root.data) ? root.data : {};
  const extJsonlHeader = isPlainObject(data.ext_jsonl_header) ? data.ext_jsonl_header : null;
  const floors = Array.isArray(data.floors) ? data.floors : [];
  for (const floor of floors) {
    if (!isPlainObject(floor) || !Array.isArray(floor.pages)) continue;
    for (const page of floor.pages) {
      if (!isPlainObject(page) || !Array.isArray(page.messages)) continue;
      for (const message of page.messages) {
        if (
          isPlainObject(message) &&
          typeof message._original_id === 'string' &&
          typeof message.name === 'string'
        ) {
          names.set(message._original_id, message.name);
        }
      }
    }
  }
  return { names, extJsonlHeader };
}
