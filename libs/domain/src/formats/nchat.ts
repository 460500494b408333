import { hash } from 'node:crypto';
import { isPlainObject, JsonObject } from './format.rules';

/**
 * `nchat`, Hearth's lossless chat file (spec 3 "Chat file formats"): one JSON object whose `data` holds
 * every branch, line, floor (any state, superseded or not), page and message of a session with all
 * their stored fields, plus variables and memories. Stored ids are written as `_original_id` and every
 * reference as a `*_ref` to one of them, so an import rebuilds the references with new ids. Beyond
 * spec 3's list, `data` carries `branches`, `lines` (optional) and `character_binding` (optional).
 * Reading and checking a file: nchat-parse.ts.
 */

export const NCHAT_SPEC = 'native_chat';
export const NCHAT_SPEC_VERSION = '1.0.0';
/** The `spec_version` major this build reads; another major is 400 `import_unsupported_version`. */
export const NCHAT_SUPPORTED_MAJOR = 1;
/** Memory relation types of memory v2; other strings are kept as they are. */
export const MEMORY_RELATION_TYPES = ['derived_from', 'compacts', 'resolves'] as const;

export type NchatFloorState = 'generating' | 'committed' | 'failed' | 'cancelled';
export type NchatPageKind = 'input' | 'output' | 'greeting';
export type NchatMessageRole = 'system' | 'user' | 'assistant' | 'narrator' | 'tool';
export type NchatVariableScope = 'chat' | 'branch' | 'floor' | 'page';

export interface NchatBranch {
  _original_id: string;
  name: string;
  source_floor_id_ref: string | null;
  head_floor_id_ref: string | null;
  created_at: number;
  updated_at: number;
}

/** A floor line (storage index of the floor tree); optional in files: an import may rebuild lines. */
export interface NchatLine {
  _original_id: string;
  parent_line_id_ref: string | null;
  fork_floor_no: number | null;
  start_floor_no: number;
  created_at: number;
}

export interface NchatMessage {
  _original_id: string;
  seq: number;
  role: NchatMessageRole;
  content: string;
  content_format: string;
  is_hidden: boolean;
  source: string;
  token_count: number | null;
  token_encoding: string | null;
  created_at: number;
  /** What an import captured beyond the columns (e.g. `ext_jsonl` line fields), when stored. */
  extra?: JsonObject;
}

export interface NchatPage {
  _original_id: string;
  page_no: number;
  page_kind: NchatPageKind;
  is_active: boolean;
  version: number;
  checksum: string | null;
  created_at: number;
  updated_at: number;
  messages: NchatMessage[];
}

export interface NchatFloor {
  _original_id: string;
  branch_id_ref: string;
  floor_no: number;
  parent_floor_id_ref: string | null;
  line_id_ref: string | null;
  state: NchatFloorState;
  token_in: number;
  token_out: number;
  reasoning_text: string | null;
  metadata: unknown;
  state_snapshot: unknown;
  superseded_at: number | null;
  superseded_by_floor_id_ref: string | null;
  created_at: number;
  updated_at: number;
  pages: NchatPage[];
}

/** A variable of the chat: scope `chat` (no ref), or a branch, floor or page of the file. */
export interface NchatVariable {
  scope: NchatVariableScope;
  scope_id_ref: string | null;
  key: string;
  value: unknown;
  updated_at: number;
}

/**
 * A memory item (memory v2). Known fields are checked; every other field is kept as it is.
 * `branch_id_ref`, `floor_id_ref` and `covered_floor_id_refs` point at the file's branches and floors.
 */
export interface NchatMemoryItem {
  _original_id: string;
  content: string;
  summary_tier?: string | null;
  lifecycle_status?: string | null;
  source_job_id?: string | null;
  branch_id_ref?: string | null;
  floor_id_ref?: string | null;
  covered_floor_id_refs?: string[];
  token_count?: number | null;
  created_at?: number;
  updated_at?: number;
  [field: string]: unknown;
}

export interface NchatMemoryEdge {
  _original_id?: string;
  from_item_id_ref: string;
  to_item_id_ref: string;
  /** `derived_from`, `compacts`, `resolves`, or another relation type. */
  relation_type: string;
  created_at?: number;
  [field: string]: unknown;
}

export interface NchatData {
  title: string;
  status: 'active' | 'archived';
  /** The session's character binding as exported (ignored when the import names a character). */
  character_binding?: JsonObject | null;
  branches: NchatBranch[];
  lines?: NchatLine[];
  floors: NchatFloor[];
  variables?: NchatVariable[];
  memories?: { items: NchatMemoryItem[]; edges: NchatMemoryEdge[] };
}

export interface NchatFile {
  spec: typeof NCHAT_SPEC;
  spec_version: string;
  exported_at: number;
  export_source: string;
  export_app_version: string;
  data: NchatData;
}

export interface NchatCounts {
  branch_count: number;
  floor_count: number;
  page_count: number;
  message_count: number;
  variable_count: number;
  memory_item_count: number;
  memory_edge_count: number;
}

export interface ParsedNchat {
  chat: NchatFile;
  counts: NchatCounts;
  warnings: string[];
}

/** The checksum of a page: sha256 over its messages' role, content, format and hidden flag, in order. */
export function pageChecksum(
  messages: ReadonlyArray<{ role: string; content: string; content_format?: string; is_hidden?: boolean }>,
): string {
  const body = JSON.stringify(
    messages.map((m) => [m.role, m.content, m.content_format ?? 'text', m.is_hidden ?? false]),
  );
  // One-shot hash: an import checksums every page (a Hash object per page cost ~2 µs of ~10).
  return `sha256:${hash('sha256', body, 'hex')}`;
}

/** `nchat` when the text is a JSON object whose `spec` is `native_chat`, else `ext_jsonl`. */
export function detectChatFormat(text: string): 'nchat' | 'ext_jsonl' {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (!body.trimStart().startsWith('{')) return 'ext_jsonl';
  try {
    const value: unknown = JSON.parse(body);
    return isPlainObject(value) && value.spec === NCHAT_SPEC ? 'nchat' : 'ext_jsonl';
  } catch {
    return 'ext_jsonl';
  }
}

/** The file text of a chat tree (compact JSON). */
export function serializeNchat(chat: NchatFile): string {
  return JSON.stringify(chat);
}
