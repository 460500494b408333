import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  regexProfilesRepository,
  type Db,
  type PresetRegexListQuery,
  type RegexProfileRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { libraryListQuery, type LibraryListInput } from '../presets/library-asset-versions';

/** `GET /regex-profiles`: the account's regex profiles (not deleted), summaries only. */
@Injectable()
export class ListRegexProfilesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    input: LibraryListInput,
  ): Promise<{ rows: RegexProfileRow[]; total: number; query: PresetRegexListQuery }> {
    const query = libraryListQuery(input);
    return { ...(await regexProfilesRepository.list(this.db, actor.accountId, query)), query };
  }
}
