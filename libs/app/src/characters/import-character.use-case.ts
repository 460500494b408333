import { Inject, Injectable } from '@nestjs/common';
import {
  ID_PREFIX,
  importParseError,
  isPng,
  newId,
  parseCharacterCard,
  parseJsonText,
  checkWorldbookImportEntries,
  compactCardText,
  isPlainObject,
  decodePngCardChunk,
  readPngCardChunk,
  type NormalizedCharacterCard,
} from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  charactersRepository,
  inTransaction,
  type Db,
  type SessionRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { createSessionInTransaction, DEFAULT_SESSION_TITLE } from '../sessions/create-session.use-case';
import {
  CHARACTER_IMPORT_MAX_BYTES,
  CHARACTER_PNG_MAX_BYTES,
  CHARACTER_SOURCE,
  importPayloadTooLarge,
  requireUsableLorebook,
  toStoredCard,
  type CharacterVersionSourceFormat,
  type CharacterWithVersion,
} from './character-rules';

/** Session titles are 1-200 characters (docs/decisions.md "Sessions and Projects"). */
const SESSION_TITLE_MAX_CHARS = 200;

export type CharacterImportSource =
  /** A card object from a JSON body (`payload`): legacy flat, `chara_card_v2` or `chara_card_v3`. */
  | { kind: 'card'; payload: unknown }
  /** A card file's bytes: a PNG with a `chara`/`ccv3` chunk, or UTF-8 JSON (upload or `png_base64`). */
  | { kind: 'file'; bytes: Buffer; pngOnly?: boolean };

export interface ImportCharacterInput {
  source: CharacterImportSource;
  /** Default true: a session bound to the new version is created in the same transaction. */
  create_session?: boolean;
  /** The session's title (default: the character's name). */
  title?: string;
}

export interface ImportCharacterResult extends CharacterWithVersion {
  session: SessionRow | null;
  warnings: string[];
}

/**
 * `POST /import/character` (spec 3 "Imports"): parses the card (macros stay literal, unknown fields are
 * kept), stores a character and its version 1, logs `import_character`, and with `create_session` creates
 * the session pinned to that version, all in one transaction: a failure leaves nothing.
 */
@Injectable()
export class ImportCharacterUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: ImportCharacterInput): Promise<ImportCharacterResult> {
    const { card, sourceFormat } = readCard(input.source);
    const stored = toStoredCard(card);
    const book = stored.data.character_book;
    if (isPlainObject(book)) checkWorldbookImportEntries(book.entries, 'data.character_book.entries');
    requireUsableLorebook(stored);
    const createSession = input.create_session ?? true;
    return inTransaction(this.db, async ({ tx }) => {
      const now = Date.now();
      const id = newId(ID_PREFIX.character);
      const versionId = newId(ID_PREFIX.characterVersion);
      const name = stored.data.name;
      const character = await charactersRepository.insert(tx, {
        id,
        account_id: actor.accountId,
        name,
        source: CHARACTER_SOURCE,
        source_format: sourceFormat,
        latest_version_id: versionId,
        version_no: 1,
        deleted_at: null,
        created_at: now,
        updated_at: now,
      });
      const log = await this.logs.write(tx, actor, {
        action: 'import_character',
        target_type: 'character',
        target_id: id,
        after_ref: { id, name, version_no: 1, version_id: versionId },
        metadata: { source_format: sourceFormat, create_session: createSession },
      });
      const version = await assetVersionsRepository.insert(tx, {
        id: versionId,
        account_id: actor.accountId,
        asset_kind: 'character',
        asset_id: id,
        version_no: 1,
        name,
        payload: JSON.stringify(stored),
        source_format: sourceFormat,
        change_kind: 'import',
        created_by_operation_id: log.id,
        created_at: now,
      });
      const session = createSession
        ? await createSessionInTransaction(
            tx,
            actor,
            {
              title: input.title ?? sessionTitleOf(name),
              character_id: id,
              character_version_id: versionId,
            },
            { access: this.access, operationLogs: this.logs },
          )
        : null;
      return { character, version, session, warnings: card.warnings };
    });
  }
}

/** The character's name cut to a session title (whole code points), or the default for a blank name. */
function sessionTitleOf(name: string): string {
  const chars = Array.from(name.trim());
  return chars.length === 0 ? DEFAULT_SESSION_TITLE : chars.slice(0, SESSION_TITLE_MAX_CHARS).join('');
}

function readCard(source: CharacterImportSource): {
  card: NormalizedCharacterCard;
  sourceFormat: CharacterVersionSourceFormat;
} {
  if (source.kind === 'card') {
    const card = parseCharacterCard(source.payload);
    return { card, sourceFormat: card.source_format };
  }
  const { bytes } = source;
  if (isPng(bytes)) {
    if (bytes.length > CHARACTER_PNG_MAX_BYTES) {
      throw importPayloadTooLarge('The PNG file', bytes.length, CHARACTER_PNG_MAX_BYTES);
    }
    // One read of the chunks for the size check and the card (a PNG may hold 400,000 tiny chunks).
    const chunk = readPngCardChunk(bytes);
    const textBytes = chunk ? Buffer.from(compactCardText(chunk.text), 'base64').length : 0;
    if (textBytes > CHARACTER_IMPORT_MAX_BYTES) {
      throw importPayloadTooLarge('The card in the PNG', textBytes, CHARACTER_IMPORT_MAX_BYTES);
    }
    return { card: parseCharacterCard(decodePngCardChunk(chunk).card), sourceFormat: 'png' };
  }
  if (source.pngOnly) throw importParseError('png_base64 is not a PNG image (PNG signature missing)');
  if (bytes.length > CHARACTER_IMPORT_MAX_BYTES) {
    throw importPayloadTooLarge('The card file', bytes.length, CHARACTER_IMPORT_MAX_BYTES);
  }
  const card = parseCharacterCard(parseJsonText(bytes.toString('utf8'), 'character card file'));
  return { card, sourceFormat: card.source_format };
}
