import type { Json, NullableJson } from './core.table';

export type TemporaryConversationStatus = 'active' | 'finalized' | 'discarded' | 'cancelled' | 'expired';
export type TemporaryRetentionPolicy = 'delete_on_finalize' | 'ttl' | 'keep_for_debug';
export type TemporaryVisibility = 'client_visible' | 'internal';

/**
 * A temporary conversation's own state (migration 20261127110000): its session row (`kind`
 * `temporary`) holds the bindings, its floors the transcript on branch `main`.
 */
export interface TemporaryConversationsTable {
  session_id: string;
  account_id: string;
  workspace_id: string;
  project_id: string;
  source_session_id: string | null;
  title: string | null;
  purpose: string | null;
  status: TemporaryConversationStatus;
  retention_policy: TemporaryRetentionPolicy;
  ttl_seconds: number | null;
  visibility: TemporaryVisibility;
  /** `{digest, source_session_id}` at creation. */
  source_snapshot: Json<{ digest: string | null; source_session_id: string | null }>;
  agent_origin: NullableJson<Record<string, unknown>>;
  created_by_client_id: string | null;
  created_at: number;
  updated_at: number;
  last_activity_at: number;
  expires_at: number | null;
  finalized_at: number | null;
  discarded_at: number | null;
  cancelled_at: number | null;
  /** When the conversation became `expired` (not part of the resource: its terminal time for cleanup). */
  expired_at: number | null;
  cleaned_at: number | null;
}

/** An export candidate for a page (target `page_staged_write`): never applied to the page by itself. */
export interface PageStagedWritesTable {
  id: string;
  account_id: string;
  project_id: string;
  session_id: string;
  target_page_id: string;
  /** `temporary_conversation` (an export) or `agent_job` (an agent run's `page_staged_write` delivery). */
  source_kind: 'temporary_conversation' | 'agent_job';
  source_conversation_id: string | null;
  source_page_id: string | null;
  /** The Agent Job that wrote it (`agent_job` only). */
  source_job_id: string | null;
  target: 'page_staged_write';
  status: 'staged';
  reason: string;
  /** The source page's messages: `[{role, content}]`. */
  content: Json<Array<{ role: string; content: string }>>;
  created_by_client_id: string | null;
  created_at: number;
}
