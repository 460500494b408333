import type { Generated, Selectable } from 'kysely';
import type { NullableJson } from './core.table';

export type GenerationRunStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** One generation of a turn (docs/decisions.md "Turns and runs"). */
export interface GenerationRunsTable {
  id: string;
  account_id: string;
  session_id: string;
  branch_id: string;
  /** The generating floor (respond) or the committed floor retried; no FK: a failed floor is removed. */
  floor_id: string | null;
  /** `respond`, `regenerate`, `retry_floor`, `retry_step`, `edit_and_regenerate`. */
  run_type: string;
  status: GenerationRunStatus;
  phase: string;
  phase_seq: Generated<number>;
  attempt_no: Generated<number>;
  detached: Generated<boolean>;
  temp_id: string;
  pending_text: Generated<string>;
  pending_reasoning: string | null;
  last_event_seq: Generated<number>;
  error: NullableJson<{ code: string; message: string } | null>;
  lease_expires_at: number;
  started_at: number;
  updated_at: number;
  completed_at: number | null;
}

/** A sequenced event of a detached run, kept for reattachment. */
export interface GenerationRunEventsTable {
  run_id: string;
  seq: number;
  type: string;
  /** The SSE `data:` JSON as written. */
  data: string;
  created_at: number;
}

export type GenerationRunRow = Selectable<GenerationRunsTable>;
export type GenerationRunEventRow = Selectable<GenerationRunEventsTable>;
