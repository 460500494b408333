/** The head row of a character (db/migrations/20261122010000_characters.ts); versions are in `asset_versions`. */
export interface CharactersTable {
  id: string;
  account_id: string;
  /** The name of the latest version (the card's `data.name`). */
  name: string;
  /** Always `ext_frontend` for now (spec 3: imported records). */
  source: string;
  /** The format the character was first imported from: `legacy`, `chara_card_v2`, `chara_card_v3` or `png`. */
  source_format: string;
  latest_version_id: string;
  /** The latest version's number. */
  version_no: number;
  /** Set by DELETE (soft delete); every route then answers 404. */
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}
