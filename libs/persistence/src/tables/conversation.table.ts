import type { Json } from './core.table';

/** Conversation tree tables (db/migrations/20261122001000_conversation_core.ts). */
export interface BranchesTable {
  id: string;
  account_id: string;
  session_id: string;
  name: string;
  /** The floor the branch was made from (null for `main`). */
  source_floor_id: string | null;
  /** The last floor of the branch's history (null while it has none). */
  head_floor_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface FloorsTable {
  id: string;
  account_id: string;
  session_id: string;
  branch_id: string;
  floor_no: number;
  parent_floor_id: string | null;
  state: 'generating' | 'committed' | 'failed' | 'cancelled';
  token_in: number;
  token_out: number;
  reasoning_text: string | null;
  metadata: Json;
  superseded_at: number | null;
  superseded_by_floor_id: string | null;
  created_at: number;
  updated_at: number;
  /** The floor's line (20261122060000_conversation_model); null only for rows written before lines. */
  line_id: string | null;
  /** Variables and lorebook timed-effect state the floor's turn saw (written by the turn use cases). */
  state_snapshot: Json | null;
}

/**
 * A chain of floors, each the first child of the previous one in the line
 * (db/migrations/20261122060000_conversation_model.ts). A floor's lineage is its line from
 * `start_floor_no` to the floor, then the parent line up to `fork_floor_no`, and so on.
 */
export interface FloorLinesTable {
  id: string;
  account_id: string;
  session_id: string;
  parent_line_id: string | null;
  /** The floor_no, in the parent line, of the floor this line continues from. */
  fork_floor_no: number | null;
  start_floor_no: number;
  created_at: number;
}

export interface PagesTable {
  id: string;
  account_id: string;
  session_id: string;
  floor_id: string;
  page_no: number;
  page_kind: 'input' | 'output' | 'greeting';
  is_active: boolean;
  version: number;
  checksum: string | null;
  created_at: number;
  updated_at: number;
}

export interface MessagesTable {
  id: string;
  account_id: string;
  session_id: string;
  floor_id: string;
  page_id: string;
  seq: number;
  role: 'system' | 'user' | 'assistant' | 'narrator' | 'tool';
  content: string;
  content_format: string;
  is_hidden: boolean;
  source: string;
  token_count: number | null;
  /** The encoding `token_count` was counted with (`o200k_base`), when the message was written. */
  token_encoding: string | null;
  created_at: number;
}
