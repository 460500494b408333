import type { Json } from './core.table';

/** A chat-completion preset's head row (db/migrations/20261122020000_presets_regex.ts); versions live in `asset_versions`. */
export interface PresetsTable {
  id: string;
  account_id: string;
  name: string;
  /** `ext_frontend` (spec 3). */
  source: string;
  latest_version_id: string;
  /** The latest version's number. */
  version_no: number;
  /** Soft delete: set once, the preset answers 404 everywhere; its versions stay. */
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A regex profile's head row: a list of regex scripts, with the latest version's script count and compat report. */
export interface RegexProfilesTable {
  id: string;
  account_id: string;
  name: string;
  source: string;
  latest_version_id: string;
  version_no: number;
  script_count: number;
  /** spec 3 `compat_report` of the latest version. */
  compat_report: Json<Record<string, number | boolean>>;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * The JSON text of an asset version as received (key order kept: `asset_versions.payload` is `jsonb`,
 * which reorders object keys). Same value as the payload; written in the version's transaction.
 */
export interface AssetVersionFilesTable {
  version_id: string;
  account_id: string;
  body: string;
}
