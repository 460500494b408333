import {
  AUTHORS_NOTE_DEFAULTS,
  authorsNoteOfHeader,
  isPlainObject,
  NCHAT_SPEC,
  NCHAT_SPEC_VERSION,
  serializeExtJsonl,
  serializeNchat,
  NOTE_METADATA_KEYS,
  type AuthorsNote,
  type ExtJsonlExportFloor,
  type JsonObject,
  type NchatData,
  type NchatFile,
  type NchatFloor,
  type NchatMemoryEdge,
  type NchatMemoryItem,
  type NchatVariable,
} from '@hearth/domain';
import {
  assetVersionsRepository,
  charactersRepository,
  chatTransferRepository,
  sessionPromptSettingsRepository,
  type Executor,
  type SessionRow,
  type SessionTree,
} from '@hearth/persistence';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { storedSettings, validAuthorsNoteKeys } from '../prompt-settings/prompt-settings-rules';
import {
  CHAT_CONTENT_TYPES,
  EXPORT_APP_VERSION,
  CHAT_FILE_EXTENSIONS,
  type ChatExportOptions,
  type ChatFile,
} from './chat-transfer-rules';

/** Counts an export records in its operation log and job result. */
export interface ChatExportCounts {
  format: 'nchat' | 'ext_jsonl';
  branch_count: number;
  floor_count: number;
  page_count: number;
  message_count: number;
  variable_count: number;
  memory_item_count: number;
  memory_edge_count: number;
  byte_count: number;
}

export interface BuiltChatExport {
  file: ChatFile;
  counts: ChatExportCounts;
}

/**
 * Builds the export file of a session from storage (spec 3 "Chat file formats"): `nchat` keeps every
 * branch, line, floor (any state, superseded ones too), page and message with all stored fields, plus
 * variables and memories when asked; `ext_jsonl` writes the live committed floors of `main` (the lineage of
 * its head, without superseded floors), pages merged into swipes, with the header an import kept and the
 * session's author's note in its `chat_metadata.note_*`.
 *
 * `db` is the export's snapshot transaction (`inReadSnapshot`, the chat export's or the backup's), in
 * which `session` was read too: every read of the file sees one moment of the session, so turns
 * committing meanwhile cannot tear it.
 */
export async function buildChatExport(
  db: Executor,
  session: SessionRow,
  options: ChatExportOptions,
): Promise<BuiltChatExport> {
  const [tree, stored] = await Promise.all([
    chatTransferRepository.readSessionTree(db, session.account_id, session.id),
    chatTransferRepository.findSessionData(db, session.account_id, session.id),
  ]);
  const characterName = await boundCharacterName(db, session);
  if (options.format === 'ext_jsonl') {
    const floors = mainLineage(tree);
    const header = isPlainObject(stored?.ext_jsonl_header) ? stored.ext_jsonl_header : null;
    const fileCharacterName =
      characterName ?? firstSpeaker(tree, floors) ?? headerName(header, 'character_name') ?? session.title;
    const settings = storedSettings(await sessionPromptSettingsRepository.find(db, session.id));
    const content = serializeExtJsonl(
      {
        header,
        authors_note: exportedAuthorsNote(header, settings.authors_note),
        floors: floors.map((floor) => extFloor(tree, floor.id)),
      },
      {
        user_name: headerName(header, 'user_name') ?? 'User',
        character_name: characterName ?? headerName(header, 'character_name') ?? fileCharacterName,
      },
    );
    const pageIds = new Set(floors.map((floor) => floor.id));
    const pages = tree.pages.filter((page) => pageIds.has(page.floor_id));
    return {
      file: {
        name: fileCharacterName,
        extension: CHAT_FILE_EXTENSIONS.ext_jsonl,
        content_type: CHAT_CONTENT_TYPES.ext_jsonl,
        content,
      },
      counts: {
        format: 'ext_jsonl',
        branch_count: 1,
        floor_count: floors.length,
        page_count: pages.length,
        message_count: tree.messages.filter((m) => pageIds.has(m.floor_id)).length,
        variable_count: 0,
        memory_item_count: 0,
        memory_edge_count: 0,
        byte_count: Buffer.byteLength(content, 'utf8'),
      },
    };
  }

  const variables = options.include_variables
    ? (await chatTransferRepository.listSessionVariables(db, session.account_id, session.id)).map(
        (v): NchatVariable => ({
          scope: v.scope as NchatVariable['scope'],
          scope_id_ref:
            v.scope === 'branch'
              ? v.branch_id
              : v.scope === 'floor'
                ? v.floor_id
                : v.scope === 'page'
                  ? v.page_id
                  : null,
          key: v.key,
          value: v.value,
          updated_at: v.updated_at,
        }),
      )
    : undefined;
  // Asked for, memories are always there (`{items: [], edges: []}` when the session has none), like variables.
  const storedMemories = isPlainObject(stored?.memories) ? stored.memories : null;
  const memories = options.include_memories
    ? {
        items: (storedMemories?.items ?? []) as NchatMemoryItem[],
        edges: (storedMemories?.edges ?? []) as NchatMemoryEdge[],
      }
    : undefined;
  const data: NchatData = {
    title: session.title,
    status: session.status,
    character_binding: characterBinding(session, stored?.character_binding, characterName),
    branches: tree.branches.map((b) => ({
      _original_id: b.id,
      name: b.name,
      source_floor_id_ref: b.source_floor_id,
      head_floor_id_ref: b.head_floor_id,
      created_at: b.created_at,
      updated_at: b.updated_at,
    })),
    lines: tree.lines.map((l) => ({
      _original_id: l.id,
      parent_line_id_ref: l.parent_line_id,
      fork_floor_no: l.fork_floor_no,
      start_floor_no: l.start_floor_no,
      created_at: l.created_at,
    })),
    floors: tree.floors.map((floor) => nchatFloor(tree, floor.id)),
  };
  if (variables) data.variables = variables;
  if (memories) data.memories = memories;
  // An imported ST chat's header travels along, so ext_jsonl → nchat → ext_jsonl loses nothing.
  if (isPlainObject(stored?.ext_jsonl_header)) {
    (data as NchatData & { ext_jsonl_header?: JsonObject }).ext_jsonl_header = stored.ext_jsonl_header;
  }
  const file: NchatFile = {
    spec: NCHAT_SPEC,
    spec_version: NCHAT_SPEC_VERSION,
    exported_at: Date.now(),
    export_source: 'api',
    export_app_version: EXPORT_APP_VERSION,
    data,
  };
  const content = serializeNchat(file);
  return {
    file: {
      name: session.title,
      extension: CHAT_FILE_EXTENSIONS.nchat,
      content_type: CHAT_CONTENT_TYPES.nchat,
      content,
    },
    counts: {
      format: 'nchat',
      branch_count: tree.branches.length,
      floor_count: tree.floors.length,
      page_count: tree.pages.length,
      message_count: tree.messages.length,
      variable_count: variables?.length ?? 0,
      memory_item_count: memories?.items.length ?? 0,
      memory_edge_count: memories?.edges.length ?? 0,
      byte_count: Buffer.byteLength(content, 'utf8'),
    },
  };
}

interface TreeIndex {
  pages: Map<string, SessionTree['pages']>;
  messages: Map<string, SessionTree['messages']>;
  floors: Map<string, SessionTree['floors'][number]>;
}

const indexes = new WeakMap<SessionTree, TreeIndex>();

/** Pages by floor and messages by page, built once per tree (exports of long chats stay linear). */
function indexOf(tree: SessionTree): TreeIndex {
  let index = indexes.get(tree);
  if (!index) {
    index = { pages: new Map(), messages: new Map(), floors: new Map(tree.floors.map((f) => [f.id, f])) };
    for (const page of tree.pages) {
      const list = index.pages.get(page.floor_id) ?? [];
      list.push(page);
      index.pages.set(page.floor_id, list);
    }
    for (const message of tree.messages) {
      const list = index.messages.get(message.page_id) ?? [];
      list.push(message);
      index.messages.set(message.page_id, list);
    }
    for (const list of index.pages.values()) list.sort((a, b) => a.page_no - b.page_no);
    for (const list of index.messages.values()) list.sort((a, b) => a.seq - b.seq);
    indexes.set(tree, index);
  }
  return index;
}

function pagesOf(tree: SessionTree, floorId: string) {
  return indexOf(tree).pages.get(floorId) ?? [];
}

function messagesOf(tree: SessionTree, pageId: string) {
  return indexOf(tree).messages.get(pageId) ?? [];
}

function nchatFloor(tree: SessionTree, floorId: string): NchatFloor {
  const floor = indexOf(tree).floors.get(floorId)!;
  return {
    _original_id: floor.id,
    branch_id_ref: floor.branch_id,
    floor_no: floor.floor_no,
    parent_floor_id_ref: floor.parent_floor_id,
    line_id_ref: floor.line_id,
    state: floor.state,
    token_in: floor.token_in,
    token_out: floor.token_out,
    reasoning_text: floor.reasoning_text,
    metadata: floor.metadata,
    state_snapshot: floor.state_snapshot,
    superseded_at: floor.superseded_at,
    superseded_by_floor_id_ref: floor.superseded_by_floor_id,
    created_at: floor.created_at,
    updated_at: floor.updated_at,
    pages: pagesOf(tree, floor.id).map((page) => ({
      _original_id: page.id,
      page_no: page.page_no,
      page_kind: page.page_kind,
      is_active: page.is_active,
      version: page.version,
      checksum: page.checksum,
      created_at: page.created_at,
      updated_at: page.updated_at,
      messages: messagesOf(tree, page.id).map((m) => {
        const message: NchatFloor['pages'][number]['messages'][number] & { name?: string } = {
          _original_id: m.id,
          seq: m.seq,
          role: m.role,
          content: m.content,
          content_format: m.content_format,
          is_hidden: m.is_hidden,
          source: m.source,
          token_count: m.token_count,
          token_encoding: m.token_encoding,
          created_at: m.created_at,
        };
        if (m.name !== null) message.name = m.name;
        if (isPlainObject(m.extra)) message.extra = m.extra;
        return message;
      }),
    })),
  };
}

/** The floors of `main` from floor 0 to its head that are committed and not superseded. */
function mainLineage(tree: SessionTree) {
  const main = tree.branches.find((b) => b.name === MAIN_BRANCH);
  const byId = new Map(tree.floors.map((floor) => [floor.id, floor]));
  const chain = [];
  let current = main?.head_floor_id ? byId.get(main.head_floor_id) : undefined;
  while (current) {
    chain.push(current);
    current = current.parent_floor_id ? byId.get(current.parent_floor_id) : undefined;
  }
  return chain.reverse().filter((floor) => floor.state === 'committed' && floor.superseded_at === null);
}

function extFloor(tree: SessionTree, floorId: string): ExtJsonlExportFloor {
  return {
    pages: pagesOf(tree, floorId).map((page) => ({
      page_no: page.page_no,
      page_kind: page.page_kind,
      is_active: page.is_active,
      version: page.version,
      messages: messagesOf(tree, page.id).map((m) => ({
        seq: m.seq,
        role: m.role,
        content: m.content,
        is_hidden: m.is_hidden,
        name: m.name,
        created_at: m.created_at,
        extra: m.extra ?? undefined,
      })),
    })),
  };
}

/** The name of the first character line (imported chats keep their speaker names). */
function firstSpeaker(tree: SessionTree, floors: Array<{ id: string }>): string | null {
  const ids = new Set(floors.map((floor) => floor.id));
  const message = tree.messages.find(
    (m) =>
      ids.has(m.floor_id) && m.role === 'assistant' && typeof m.name === 'string' && m.name.trim() !== '',
  );
  return message?.name ?? null;
}

/** A name of the `ext_jsonl` header, unless ST's placeholder `unused`. */
function headerName(header: JsonObject | null, key: 'user_name' | 'character_name'): string | null {
  const value = header?.[key];
  return typeof value === 'string' && value.trim() !== '' && value !== 'unused' ? value : null;
}

/** The bound character's name: the pinned version's, else the character's latest. */
async function boundCharacterName(db: Executor, session: SessionRow): Promise<string | null> {
  if (session.character_version_id) {
    const version = await assetVersionsRepository.findOfAccount(
      db,
      session.account_id,
      session.character_version_id,
      'character',
    );
    if (version) return version.name;
  }
  if (session.character_id) {
    const character = await charactersRepository.findOfAccount(db, session.account_id, session.character_id);
    if (character) return character.name;
  }
  return null;
}

function characterBinding(session: SessionRow, imported: unknown, name: string | null): JsonObject | null {
  if (session.character_id || session.character_version_id) {
    return {
      character_id: session.character_id,
      character_version_id: session.character_version_id,
      sync_policy: session.character_version_id ? 'pin' : 'latest',
      name,
    };
  }
  return isPlainObject(imported) ? imported : null;
}

/**
 * The note keys an `ext_jsonl` header carries (ST keeps the note in `chat_metadata.note_*`): every key the
 * session has set, and every key the import took from the captured header, each with the value turns use
 * (a key cleared after the import goes out as its default, not as the imported value). A header value the
 * import could not take (past Hearth's bounds, or not of ST's type: `validAuthorsNoteKeys`) is the chat's
 * ST state that Hearth never used, so it stays as written unless the session sets that key. Keys neither
 * set nor in the header stay out, so ST fills them from its own defaults as for any chat lacking them.
 */
function exportedAuthorsNote(header: JsonObject | null, stored: Partial<AuthorsNote>): Partial<AuthorsNote> {
  const imported = validAuthorsNoteKeys(authorsNoteOfHeader(header));
  const effective: AuthorsNote = { ...AUTHORS_NOTE_DEFAULTS, ...stored };
  const note: Partial<AuthorsNote> = {};
  for (const key of Object.keys(NOTE_METADATA_KEYS) as Array<keyof AuthorsNote>) {
    if (stored[key] !== undefined || imported[key] !== undefined)
      (note as Record<string, unknown>)[key] = effective[key];
  }
  return note;
}
