import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { vcTagsRepository, type Db, type VcTagRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { vcTagNotFound } from './vc-tag-rules';

/** `GET /vc-tags/:id`: a tag of the caller's account, else 404 `tag_not_found`. */
@Injectable()
export class GetVcTagUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<VcTagRow> {
    const tag = await vcTagsRepository.findOfAccount(this.db, actor.accountId, id);
    if (!tag) throw vcTagNotFound();
    return tag;
  }
}
