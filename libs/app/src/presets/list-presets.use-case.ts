import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { presetsRepository, type Db, type PresetRegexListQuery, type PresetRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { libraryListQuery, type LibraryListInput } from './library-asset-versions';

/** `GET /presets`: the account's presets (not deleted), summaries only. */
@Injectable()
export class ListPresetsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    input: LibraryListInput,
  ): Promise<{ rows: PresetRow[]; total: number; query: PresetRegexListQuery }> {
    const query = libraryListQuery(input);
    return { ...(await presetsRepository.list(this.db, actor.accountId, query)), query };
  }
}
