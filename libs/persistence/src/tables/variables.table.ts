import type { Json } from './core.table';

/** A jsonb column: any JSON value on read, its serialised text on write. */
type JsonColumn = Json;

export type VariableScopeName = 'global' | 'chat' | 'branch' | 'floor' | 'page';
export type StagedWriteStatus = 'staged' | 'accepted_page_only' | 'promoted';

/** Spec 2 "Variable" (db/migrations/20261122090000_variables.ts). */
export interface VariablesTable {
  id: string;
  account_id: string;
  scope: VariableScopeName;
  /** `global`; the session id (chat); `<session_id>:<branch_id>` (branch); the floor id; the page id. */
  scope_id: string;
  /** The host's session (chat, branch, floor and page scopes); null for global. */
  session_id: string | null;
  /** Branch scope only. */
  branch_id: string | null;
  /** Floor scope only. */
  floor_id: string | null;
  /** Page scope only. */
  page_id: string | null;
  key: string;
  value: JsonColumn;
  created_at: number;
  updated_at: number;
}

/** Ids of deleted variables (trigger-written), so deleting a historical id is accepted. */
export interface VariableTombstonesTable {
  id: string;
  account_id: string;
  deleted_at: number;
}

/** Spec 2 "Staged variable write item (page ledger)". */
export interface VariableStagedWritesTable {
  id: string;
  account_id: string;
  session_id: string;
  branch_id: string;
  floor_id: string;
  page_id: string;
  /** Order of the write within its page (0, 1, ...). */
  seq: number;
  key: string;
  op: string;
  value: JsonColumn;
  intent: string;
  conflict_policy: string;
  reason: string | null;
  source: Json;
  evidence: Json;
  status: StagedWriteStatus;
  decision_reason: string | null;
  created_at: number;
  resolved_at: number | null;
}

/** Spec 2 "Variable promotion trace item" (page → floor only). */
export interface VariablePromotionsTable {
  id: string;
  account_id: string;
  page_id: string;
  staged_write_id: string;
  key: string;
  from_scope: string;
  from_scope_id: string;
  to_scope: string;
  to_scope_id: string;
  conflict_policy: string;
  source_variable_id: string | null;
  target_variable_id: string | null;
  value: JsonColumn;
  created_at: number;
}

/** The exact local variable view a floor's turn saw. */
export interface FloorVariableSnapshotsTable {
  floor_id: string;
  account_id: string;
  session_id: string;
  branch_id: string;
  local_view: Json;
  created_at: number;
  updated_at: number;
}
