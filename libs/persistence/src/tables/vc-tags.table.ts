import type { NullableJson } from './core.table';
import type { AssetKind } from './library.table';

export type VcTagTargetType = 'floor' | 'asset_version';

/** A VC tag (spec 3 "VC Tag"; db/migrations/20261122050000_vc_tags.ts). */
export interface VcTagsTable {
  id: string;
  account_id: string;
  name: string;
  target_type: VcTagTargetType;
  target_id: string;
  /** The asset kind of an `asset_version` target; null for floors. */
  target_asset_kind: AssetKind | null;
  session_id: string | null;
  metadata: NullableJson;
  created_by_operation_id: string | null;
  created_at: number;
}
