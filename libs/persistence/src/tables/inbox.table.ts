import type { Json } from './core.table';

/** A Project inbox entry (docs/decisions.md "Inbox"). */
export interface InboxEntriesTable {
  id: string;
  workspace_id: string;
  project_id: string;
  /** The Project owner account. */
  account_id: string;
  /** The account and Client that created the entry. */
  created_by_account_id: string;
  created_by_client_id: string;
  kind: string;
  title: string;
  /** Any JSON, including `null`: written as serialised text. */
  body: Json;
  /** UTF-8 size of the serialised body, as checked against the 64 KiB limit. */
  body_byte_count: number;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  derived_output_id: string | null;
  status: 'pending' | 'accepted' | 'rejected';
  decision_reason: string | null;
  decided_by_account_id: string | null;
  decided_by_client_id: string | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}
