import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { worldbooksRepository, type AssetVersionRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readWorldbookVersionFile } from './worldbook-content';
import { worldbookNotFound, worldbookVersionNotFound } from './worldbook-rules';

/** `GET /worldbooks/:id/versions/:version_id`: the summary and the whole file the version holds. */
@Injectable()
export class GetWorldbookVersionUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(
    actor: Actor,
    id: string,
    versionId: string,
  ): Promise<{ version: Omit<AssetVersionRow, 'payload'>; payload: Record<string, unknown> }> {
    const book = await worldbooksRepository.findOfAccount(this.db, actor.accountId, id);
    if (!book) throw worldbookNotFound();
    const version = await worldbooksRepository.findVersionSummary(this.db, id, versionId);
    if (!version || version.account_id !== actor.accountId) throw worldbookVersionNotFound();
    return { version, payload: await readWorldbookVersionFile(this.db, id, version) };
  }
}
