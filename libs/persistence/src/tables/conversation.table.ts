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
  created_at: number;
}
