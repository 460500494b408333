import type { Json } from './core.table';

export type AssetKind = 'character' | 'preset' | 'worldbook' | 'regex_profile';

/** One immutable version of a library asset (db/migrations/20261122000000_asset_versions.ts). */
export interface AssetVersionsTable {
  id: string;
  account_id: string;
  asset_kind: AssetKind;
  /** The head row in the kind's own table (characters, presets, worldbooks, regex_profiles). */
  asset_id: string;
  /** 1, 2, 3… per asset. */
  version_no: number;
  /** The asset's name as of this version. */
  name: string;
  /** What this version holds, per kind (the card, the preset file, the worldbook file, the scripts). */
  payload: Json;
  /** The imported file's format where there was one (`chara_card_v2`, `png`, …). */
  source_format: string | null;
  /** Why the version exists: `import`, `create`, `update`, `rollback`, … */
  change_kind: string;
  created_by_operation_id: string | null;
  created_at: number;
}
