import type { Json } from './core.table';

export interface DerivedOutputsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  /** The Project owner account. */
  account_id: string;
  /** The account that created the entry. */
  owner_account_id: string;
  /** The Client that created the entry: a deriver may change only entries its own Client created. */
  created_by_client_id: string;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  domain: string;
  /** Any JSON, including `null`: written as serialised text. */
  value: Json;
  /** UTF-8 size of the serialised value, as checked against the 256 KiB limit. */
  value_byte_count: number;
  status: 'draft' | 'published' | 'archived';
  created_at: number;
  updated_at: number;
}
