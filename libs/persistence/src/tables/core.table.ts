import type { ColumnType, Generated } from 'kysely';

/** JSON columns: written as serialised text, read back as parsed values. */
export type Json<T = unknown> = ColumnType<T, string, string>;
export type NullableJson<T = unknown> = ColumnType<T | null, string | null, string | null>;

export interface AccountsTable {
  id: string;
  name: string;
  role: 'admin' | 'user';
  status: 'active' | 'disabled';
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export interface ClientsTable {
  id: string;
  account_id: string;
  name: string;
  status: 'active' | 'disabled';
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  client_id: string;
  /** sha256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** The first characters of the key, for recognising it in listings. */
  key_prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface WorkspacesTable {
  id: string;
  account_id: string;
  name: string;
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export interface ProjectsTable {
  id: string;
  workspace_id: string;
  account_id: string;
  name: string;
  description: string | null;
  kind: 'session_default' | 'manual';
  status: 'active' | 'archived';
  settings_override: NullableJson;
  created_at: number;
  updated_at: number;
}

export interface ProjectMembersTable {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  role: 'owner' | 'observer' | 'deriver';
  status: 'active' | 'removed';
  subject_type: 'account' | 'client';
  subject_id: string;
  client_id: string | null;
  created_by_account_id: string | null;
  created_by_client_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface SessionsTable {
  id: string;
  account_id: string;
  workspace_id: string;
  project_id: string;
  title: string;
  status: 'active' | 'archived';
  character_id: string | null;
  character_version_id: string | null;
  user_card_id: string | null;
  preset_id: string | null;
  worldbook_ids: Json<string[]>;
  regex_profile_id: string | null;
  created_by_client_id: string | null;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
  /**
   * `temporary` for a temporary conversation's session (20261127110000_temporary_conversations): every
   * normal session route answers it 404.
   */
  kind: Generated<'standard' | 'temporary'>;
}

export interface ProjectEventCountersTable {
  project_id: string;
  last_sequence: number;
}

export interface ProjectEventsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  sequence: number;
  type: string;
  visibility: 'project' | 'owner' | 'internal';
  source: 'api' | 'runtime_job' | 'migration' | 'system';
  actor_account_id: string | null;
  actor_client_id: string | null;
  session_id: string | null;
  branch_id: string | null;
  floor_id: string | null;
  page_id: string | null;
  message_id: string | null;
  operation_log_id: string | null;
  correlation_id: string | null;
  causation_event_id: string | null;
  payload: Json;
  created_at: number;
}

export interface OperationLogsTable {
  id: string;
  account_id: string | null;
  actor_type: string | null;
  actor_id: string | null;
  actor_account_id: string | null;
  operation_group_id: string | null;
  request_id: string | null;
  workspace_id: string | null;
  project_id: string | null;
  source_type: string | null;
  action: string;
  status: 'succeeded' | 'failed' | 'denied' | 'cancelled';
  session_id: string | null;
  branch_id: string | null;
  floor_id: string | null;
  run_id: string | null;
  target_type: string | null;
  target_id: string | null;
  before_ref: NullableJson;
  after_ref: NullableJson;
  diff: NullableJson;
  metadata: NullableJson;
  created_at: number;
}

export type JobStatus =
  'pending' | 'leased' | 'running' | 'retry_waiting' | 'succeeded' | 'dead_letter' | 'cancelled';

export interface JobsTable {
  id: string;
  /** The typed job name of libs/platform/queue/jobs.ts, for example `agent.run`. */
  name: string;
  queue: string;
  status: JobStatus;
  phase: string | null;
  account_id: string | null;
  workspace_id: string | null;
  project_id: string | null;
  payload: Json;
  result: NullableJson;
  dedupe_key: string | null;
  attempt_count: Generated<number>;
  max_attempts: number;
  available_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  last_error: string | null;
  last_error_code: string | null;
  last_error_class: string | null;
  /** While `leased`/`running`: the time the worker must finish or renew by (migration 20261121004000). */
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** `agent.run` jobs only (migration 20261127100000; spec 1 "Agent Job"), null for the others. */
  agent_type_id: string | null;
  agent_binding_id: string | null;
  /** The Project event that triggered the run; null for a manual run. */
  source_event_id: string | null;
  /** `event` or `manual`. */
  trigger_type: string | null;
  dry_run: boolean | null;
  /** The output targets the run may write (the binding's effective `allowed_output_targets`). */
  delivery_targets: NullableJson<string[]>;
}
