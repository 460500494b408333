import type { ColumnType } from 'kysely';
import type { Json, NullableJson } from './core.table';

/** Chat import and export tables (db/migrations/20261122120000_chat_transfer.ts). */

/** What an imported session keeps that the conversation tables have no place for. */
export interface ChatTransferSessionsTable {
  session_id: string;
  account_id: string;
  import_format: 'nchat' | 'ext_jsonl';
  /** The `ext_jsonl` header line, raw (written back by an `ext_jsonl` export). */
  ext_jsonl_header: NullableJson;
  /** `nchat` memories `{items, edges}` with branch and floor refs mapped to stored ids. */
  memories: NullableJson;
  /** The `nchat` file's `character_binding`, as it was in the file. */
  character_binding: NullableJson;
  created_at: number;
}

export type ChatTransferJobKind = 'import_chat' | 'export_chat';

/** The chat side of a `chat.transfer` ledger job (the `jobs` row of the same id holds the status). */
export interface ChatTransferJobsTable {
  id: string;
  account_id: string;
  created_by_client_id: string;
  /** The caller, so the worker acts as them (operation logs, session placement). */
  actor: Json;
  job_kind: ChatTransferJobKind;
  format: string | null;
  requested_session_id: string | null;
  /** Import: `{character_id, character_version_id, title}`; export: `{include_variables, include_memories}`. */
  options: Json;
  /** The raw import text; cleared when the import succeeds. */
  input_text: string | null;
  result_session_id: string | null;
  result: NullableJson;
  output_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The file an export job wrote. */
export interface ChatTransferArtifactsTable {
  job_id: string;
  account_id: string;
  filename_base: string;
  extension: string;
  content_type: string;
  content: string;
  byte_count: number;
  created_at: number;
  expires_at: number;
}

/** The two message columns the chat import adds (same migration). */
declare module './conversation.table' {
  interface MessagesTable {
    /** The speaker name of an imported line (`name`); null: the default name of the role. */
    name: ColumnType<string | null, string | null | undefined, string | null>;
    /** What an import captured beyond the columns (`{ext_jsonl: {...}}`); null for other messages. */
    extra: ColumnType<unknown, string | null | undefined, string | null>;
  }
}
