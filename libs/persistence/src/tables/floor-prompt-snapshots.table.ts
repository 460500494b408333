import type { Json } from './core.table';

/** The prompt of a committed floor (db/migrations/20261122100000_floor_prompt_snapshots.ts). */
export interface FloorPromptSnapshotsTable {
  floor_id: string;
  session_id: string;
  account_id: string;
  /** The engine's `prompt_snapshot` (messages, digest, activated entries, rule names, token estimate). */
  snapshot: Json<Record<string, unknown>>;
  /** The trimmed runtime trace, the assembly report and the token figures of the turn. */
  trace: Json<Record<string, unknown>>;
  created_at: number;
}
