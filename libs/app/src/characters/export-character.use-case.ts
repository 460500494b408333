import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  exportCharacterCard,
  type CharacterCardExportFormat,
  type JsonObject,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { assetVersionsRepository, charactersRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { storedCardOf } from './character-rules';

export interface ExportedCharacter {
  /** The file name without extension (the version's character name). */
  name: string;
  card: JsonObject;
}

const exportNotFound = (what: string) => new DomainError('not_found', 404, `${what} not found`);

/**
 * `GET /export/character/:id?format=v2|v3&version_id=` (spec 3 "Exports"): the card envelope of a version
 * (default the latest). A missing character or version, or a version of another character: 404 `not_found`.
 */
@Injectable()
export class ExportCharacterUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    id: string,
    format: CharacterCardExportFormat,
    versionId?: string,
  ): Promise<ExportedCharacter> {
    const character = await charactersRepository.findOfAccount(this.db, actor.accountId, id);
    if (!character) throw exportNotFound('Character');
    const version = await assetVersionsRepository.findOfAsset(
      this.db,
      character.id,
      versionId ?? character.latest_version_id,
    );
    if (!version || version.asset_kind !== 'character') throw exportNotFound('Character version');
    const stored = storedCardOf(version);
    return { name: version.name, card: exportCharacterCard({ ...stored, warnings: [] }, format) };
  }
}
