import type { Json, NullableJson } from './core.table';

/** Session and branch prompt runtime policy (db/migrations/20261122070000_prompt_runtime.ts). */
export interface PromptPoliciesTable {
  account_id: string;
  session_id: string;
  /** null: the session level; else the branch overlay. */
  branch_id: string | null;
  /** Only the fields written so far (spec 2 `persistent_policy`). */
  value: Json<Record<string, unknown>>;
  version: number;
  updated_at: number;
  /** The writer: the account id for a default Client, else the Client id. */
  updated_by: string | null;
}

export type PromptInjectionSourceKind =
  'client_injection' | 'agent_injection' | 'debug_injection' | 'system_override';

/** A persistent injection (spec 2 "Persistent injection record"). */
export interface PromptInjectionsTable {
  id: string;
  account_id: string;
  session_id: string;
  /** null for `session` scope. */
  branch_id: string | null;
  scope: 'session' | 'branch';
  source_kind: PromptInjectionSourceKind;
  title: string;
  content: string;
  placement: string;
  placement_params: NullableJson<Record<string, unknown>>;
  order: number;
  enabled: boolean;
  mode_scope: 'compat_strict' | 'compat_plus' | 'native' | null;
  ttl_ms: number | null;
  /** `created_at + ttl_ms`, or null (never expires). */
  expires_at: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}
