import type { NullableJson } from './core.table';

/** An LLM profile binding (docs/decisions.md "Model profiles"): a profile chosen for a slot, globally or per session. */
export interface LlmProfileBindingsTable {
  id: string;
  account_id: string;
  scope: 'global' | 'session';
  /** `global`, or the session id. */
  scope_id: string;
  /** The session of a `session` binding (cascades with it); null for `global`. */
  session_id: string | null;
  instance_slot: '*' | 'narrator' | 'director' | 'verifier' | 'memory';
  profile_id: string;
  /** Spec 2 binding params; a null field cancels the upstream value. Null: no params. */
  params: NullableJson<Record<string, number | boolean | string | null>>;
  created_at: number;
  updated_at: number;
}
