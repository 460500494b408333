import type { Json } from './core.table';

/** A worldbook's head row (db/migrations/20261122030000_worldbooks.ts). */
export interface WorldbooksTable {
  id: string;
  account_id: string;
  name: string;
  source: 'ext_frontend';
  /** Optimistic concurrency: +1 on every successful write; equals the latest asset version's number. */
  version: number;
  /** Top-level fields of the file other than `name` and `entries`. */
  extra: Json<Record<string, unknown>>;
  /** The version number of the latest full snapshot in `asset_versions`. */
  snapshot_version: number;
  /** Entries written by the deltas since that snapshot (a new snapshot is taken when this grows large). */
  delta_entry_count: number;
  created_at: number;
  updated_at: number;
}

/** One normalised entry (spec 3 "Worldbook entry (normalised)"); `raw` keeps the ST entry's other fields. */
export interface WorldbookEntriesTable {
  id: string;
  worldbook_id: string;
  account_id: string;
  uid: number;
  keys: Json<string[]>;
  keys_secondary: Json<string[]>;
  content: string;
  comment: string;
  selective: boolean;
  selective_logic: number;
  constant: boolean;
  position: number;
  order: number;
  depth: number;
  role: number;
  disable: boolean;
  scan_depth: number | null;
  case_sensitive: boolean | null;
  match_whole_words: boolean | null;
  exclude_recursion: boolean;
  prevent_recursion: boolean;
  delay_until_recursion: number | null;
  outlet_name: string;
  raw: Json<Record<string, unknown>>;
  /** Lower-cased keys, secondary keys, comment and content (the `q` filter). */
  search_text: string;
  created_at: number;
  updated_at: number;
}
