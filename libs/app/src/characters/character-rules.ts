import {
  characterBookToWorldbook,
  DomainError,
  ID_PREFIX,
  isPlainObject,
  newId,
  type CharacterCardData,
  type CharacterCardSourceFormat,
  type JsonObject,
  type NormalizedCharacterCard,
  type NormalizedWorldbook,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  charactersRepository,
  type AssetVersionRow,
  type CharacterRow,
  type Tx,
} from '@hearth/persistence';
import type { OperationLogWriter } from '../operation-logs/operation-log-writer';

/** Spec 3 "Limits": the import character request body, and the card text carried in a PNG (200 KiB). */
export const CHARACTER_IMPORT_MAX_BYTES = 200 * 1024;
/** A PNG card file (upload or `png_base64`) may be larger than its card: the image is not stored. */
export const CHARACTER_PNG_MAX_BYTES = 5 * 1024 * 1024;
/** The `source` of imported records (spec 3 conventions). */
export const CHARACTER_SOURCE = 'ext_frontend';
/** How a version's file came in: the card formats, or `png` for a card read from a PNG image. */
export type CharacterVersionSourceFormat = CharacterCardSourceFormat | 'png';

export const characterNotFound = () => new DomainError('character_not_found', 404, 'Character not found');
export const characterVersionNotFound = () =>
  new DomainError('asset_version_not_found', 404, 'Character version not found');
export const importPayloadTooLarge = (what: string, byteCount: number, maxBytes: number) =>
  new DomainError(
    'import_payload_too_large',
    413,
    `${what} is ${byteCount} bytes; the limit is ${maxBytes} bytes`,
    { byte_count: byteCount, max_bytes: maxBytes },
  );

/**
 * What a character version stores (`asset_versions.payload`): the normalised card without its import
 * warnings. `data` keeps every field (unknown ones and extensions included) and `envelope` the top-level
 * fields besides spec/spec_version/data (ST's V1 copies, unknown fields), so exports are lossless.
 */
export interface StoredCharacterCard {
  source_format: CharacterCardSourceFormat;
  source_spec_version: string | null;
  data: CharacterCardData;
  envelope: JsonObject;
}

export function toStoredCard(card: NormalizedCharacterCard | StoredCharacterCard): StoredCharacterCard {
  return {
    source_format: card.source_format,
    source_spec_version: card.source_spec_version,
    data: card.data,
    envelope: card.envelope,
  };
}

export function storedCardOf(version: AssetVersionRow): StoredCharacterCard {
  return version.payload as StoredCharacterCard;
}

/** The embedded `character_book` as a normalised worldbook, or null when the card has none. */
export function characterLorebook(card: StoredCharacterCard): NormalizedWorldbook | null {
  const book = card.data.character_book;
  if (book === undefined || book === null) return null;
  return characterBookToWorldbook(book);
}

/** Every stored card must give a usable lorebook; an unusable one is refused when it comes in. */
export function requireUsableLorebook(card: StoredCharacterCard): void {
  const book = card.data.character_book;
  if (book !== undefined && book !== null && isPlainObject(book)) characterLorebook(card);
}

/** The essentials an operation log keeps of a character (never the card). */
export const characterRef = (c: Pick<CharacterRow, 'id' | 'name' | 'version_no' | 'latest_version_id'>) => ({
  id: c.id,
  name: c.name,
  version_no: c.version_no,
  version_id: c.latest_version_id,
});

/** A character with the version a route is about (usually the latest). */
export interface CharacterWithVersion {
  character: CharacterRow;
  version: AssetVersionRow;
}

/** The live character of the caller's account, else 404 `character_not_found`. */
export async function requireCharacter(
  db: Parameters<typeof charactersRepository.findOfAccount>[0],
  actor: Actor,
  id: string,
): Promise<CharacterRow> {
  const character = await charactersRepository.findOfAccount(db, actor.accountId, id);
  if (!character) throw characterNotFound();
  return character;
}

/** A version of exactly this character, else 404 `asset_version_not_found`. */
export async function requireCharacterVersion(
  db: Parameters<typeof assetVersionsRepository.findOfAsset>[0],
  character: CharacterRow,
  versionId: string,
): Promise<AssetVersionRow> {
  const version = await assetVersionsRepository.findOfAsset(db, character.id, versionId);
  if (!version || version.account_id !== character.account_id || version.asset_kind !== 'character') {
    throw characterVersionNotFound();
  }
  return version;
}

export async function latestCharacterVersion(
  db: Parameters<typeof assetVersionsRepository.findOfAsset>[0],
  character: CharacterRow,
): Promise<AssetVersionRow> {
  const version = await assetVersionsRepository.findOfAsset(db, character.id, character.latest_version_id);
  if (!version) throw new Error(`character ${character.id} has no version ${character.latest_version_id}`);
  return version;
}

/**
 * Appends a version to a character whose head row the caller has locked (`lockOfAccount`): writes the
 * operation log first (the version records its id), then the version, then moves the head to it.
 */
export async function appendCharacterVersion(
  tx: Tx,
  logs: OperationLogWriter,
  actor: Actor,
  head: CharacterRow,
  input: {
    action: 'update_character' | 'rollback_character';
    change_kind: 'update' | 'rollback';
    card: StoredCharacterCard;
    source_format: string | null;
    metadata?: Record<string, unknown>;
  },
): Promise<CharacterWithVersion> {
  const now = Date.now();
  const versionNo = await assetVersionsRepository.nextVersionNo(tx, head.id);
  const versionId = newId(ID_PREFIX.characterVersion);
  const name = input.card.data.name;
  const log = await logs.write(tx, actor, {
    action: input.action,
    target_type: 'character',
    target_id: head.id,
    before_ref: characterRef(head),
    after_ref: { id: head.id, name, version_no: versionNo, version_id: versionId },
    metadata: input.metadata ?? null,
  });
  const version = await assetVersionsRepository.insert(tx, {
    id: versionId,
    account_id: head.account_id,
    asset_kind: 'character',
    asset_id: head.id,
    version_no: versionNo,
    name,
    payload: JSON.stringify(input.card),
    source_format: input.source_format,
    change_kind: input.change_kind,
    created_by_operation_id: log.id,
    created_at: now,
  });
  const character = await charactersRepository.update(tx, head.id, {
    name,
    latest_version_id: versionId,
    version_no: versionNo,
    updated_at: now,
  });
  return { character, version };
}
