import { Inject, Injectable } from '@nestjs/common';
import { offsetMeta, type OffsetMeta } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { vcTagsRepository, type Db, type VcTagListQuery, type VcTagRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export type VcTagListInput = VcTagListQuery;

export interface VcTagList {
  items: VcTagRow[];
  meta: OffsetMeta & { sort_by: 'created_at'; sort_order: 'asc' | 'desc' };
}

/** `GET /vc-tags`: the caller's account's tags, exact-match filters, by `created_at` then `id`. */
@Injectable()
export class ListVcTagsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: VcTagListInput): Promise<VcTagList> {
    const { rows, total } = await vcTagsRepository.list(this.db, actor.accountId, input);
    return {
      items: rows,
      meta: {
        ...offsetMeta(total, input.limit, input.offset),
        sort_by: 'created_at',
        sort_order: input.sortOrder,
      },
    };
  }
}
