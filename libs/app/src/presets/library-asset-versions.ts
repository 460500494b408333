import { DomainError, ID_PREFIX, newId } from '@hearth/domain';
import {
  assetVersionFilesRepository,
  assetVersionsRepository,
  type AssetKind,
  type AssetVersionRow,
  type Executor,
  type PresetRegexListQuery,
  type Tx,
} from '@hearth/persistence';

/**
 * Version plumbing shared by presets and regex profiles (docs/decisions.md "Presets and regex
 * profiles"): every write makes an immutable `asset_versions` row plus its file text, in the caller's
 * transaction, after the head row was locked.
 */

export type LibraryAssetKind = Extract<AssetKind, 'preset' | 'regex_profile'>;

const VERSION_PREFIX: Record<LibraryAssetKind, string> = {
  preset: ID_PREFIX.presetVersion,
  regex_profile: ID_PREFIX.regexProfileVersion,
};

export const newAssetVersionId = (kind: LibraryAssetKind) => newId(VERSION_PREFIX[kind]);

/** What a library list route asks for; the repository applies it. */
export type LibraryListInput = Partial<PresetRegexListQuery>;

export function libraryListQuery(input: LibraryListInput): PresetRegexListQuery {
  return {
    q: input.q === undefined || input.q === '' ? undefined : input.q,
    sortBy: input.sortBy ?? 'updated_at',
    sortOrder: input.sortOrder ?? 'desc',
    limit: input.limit ?? 50,
    offset: input.offset ?? 0,
  };
}

export interface NewAssetVersion {
  id: string;
  accountId: string;
  kind: LibraryAssetKind;
  assetId: string;
  versionNo: number;
  name: string;
  /** The version's content (the preset file, the regex script list), stored as received. */
  data: unknown;
  /** The JSON text to keep (key order); defaults to `JSON.stringify(data)`. */
  body?: string;
  sourceFormat: string | null;
  changeKind: 'import' | 'update' | 'rollback';
  operationId: string;
  now: number;
}

/** Inserts the version row and its file text. */
export async function insertAssetVersion(tx: Tx, v: NewAssetVersion): Promise<AssetVersionRow> {
  const body = v.body ?? JSON.stringify(v.data);
  const row = await assetVersionsRepository.insert(tx, {
    id: v.id,
    account_id: v.accountId,
    asset_kind: v.kind,
    asset_id: v.assetId,
    version_no: v.versionNo,
    name: v.name,
    payload: body,
    source_format: v.sourceFormat,
    change_kind: v.changeKind,
    created_by_operation_id: v.operationId,
    created_at: v.now,
  });
  await assetVersionFilesRepository.insert(tx, { version_id: v.id, account_id: v.accountId, body });
  return row;
}

/** The version's content with the key order it was received in (the payload when no file text exists). */
export async function readAssetVersionData(db: Executor, version: AssetVersionRow): Promise<unknown> {
  const body = await assetVersionFilesRepository.findBody(db, version.id);
  return body === undefined ? version.payload : JSON.parse(body);
}

/** The version's file text to keep on a rollback. */
export async function readAssetVersionBody(db: Executor, version: AssetVersionRow): Promise<string> {
  return (await assetVersionFilesRepository.findBody(db, version.id)) ?? JSON.stringify(version.payload);
}

/** The essentials of an asset for operation logs (never its content). */
export const assetRef = (head: {
  id: string;
  name: string;
  version_no: number;
  latest_version_id: string;
}) => ({
  id: head.id,
  name: head.name,
  version_no: head.version_no,
  version_id: head.latest_version_id,
});

export const assetVersionNotFound = () =>
  new DomainError('asset_version_not_found', 404, 'Asset version not found');

/** A version of this asset, or 404 `asset_version_not_found` (versions of other assets or accounts included). */
export async function requireVersionOfAsset(
  db: Executor,
  accountId: string,
  assetId: string,
  versionId: string,
): Promise<AssetVersionRow> {
  const version = await assetVersionsRepository.findOfAsset(db, assetId, versionId);
  if (!version || version.account_id !== accountId) throw assetVersionNotFound();
  return version;
}

/** 404 `not_found` of the export routes (spec 3: a missing asset, no own code). */
export const exportNotFound = () => new DomainError('not_found', 404, 'Resource not found');
