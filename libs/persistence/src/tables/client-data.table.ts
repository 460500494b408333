import type { NullableJson } from './core.table';

/** A registered custom namespace of client data (docs/decisions.md "Client data and session state"). */
export interface ClientDataNamespacesTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  /** What a retry of a floor that wrote in this namespace needs: nothing, a confirmation, or refused. */
  replay_policy: 'replay' | 'confirm' | 'block';
  /** Most present slots a session's state may hold in this namespace at one floor. */
  max_items: number;
  /** Most value bytes (UTF-8 of the JSON) those slots may hold together. */
  max_bytes: number;
  created_by_client_id: string;
  created_at: number;
  updated_at: number;
}

/** One session state write a turn landed on its floor (request order: `seq`). */
export interface SessionStateMutationsTable {
  id: string;
  account_id: string;
  namespace_id: string;
  namespace: string;
  session_id: string;
  branch_id: string;
  floor_id: string;
  seq: number;
  slot: string;
  /** false for `delete: true` (then `value` is null). */
  present: boolean;
  value: NullableJson;
  value_bytes: number;
  run_id: string | null;
  created_by_client_id: string | null;
  created_at: number;
}

/** The account's stored session state writes, kept by triggers (read and locked by the commit). */
export interface ClientDataUsageTable {
  account_id: string;
  items: number;
  bytes: number;
}
