import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import {
  variablesRepository,
  type Db,
  type StagedWriteRow,
  type VariablePromotionRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { pageNotFound } from '../conversation/conversation-errors';

export interface PageLedger<T> {
  page_id: string;
  floor_id: string;
  session_id: string;
  branch_id: string;
  items: T[];
}

async function pageEnvelope(db: Db, accountId: string, pageId: string) {
  const page = await variablesRepository.findPage(db, accountId, pageId);
  // A temporary conversation's page is not a page to this route (its session reads as missing).
  if (!page || !(await variablesRepository.findSession(db, accountId, page.session_id))) throw pageNotFound();
  const floor = await variablesRepository.findFloor(db, accountId, page.floor_id);
  if (!floor) throw pageNotFound();
  return { page_id: page.id, floor_id: floor.id, session_id: page.session_id, branch_id: floor.branch_id };
}

/** `GET /pages/:pageId/variables/staged`: the page's ledger in write order (404 `page_not_found`). */
@Injectable()
export class ListPageStagedWritesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, pageId: string): Promise<PageLedger<StagedWriteRow>> {
    const envelope = await pageEnvelope(this.db, actor.accountId, pageId);
    return {
      ...envelope,
      items: await variablesRepository.listStagedWrites(this.db, actor.accountId, pageId),
    };
  }
}

/** `GET /pages/:pageId/variables/promotions`: the page's page → floor promotion trace items. */
@Injectable()
export class ListPagePromotionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, pageId: string): Promise<PageLedger<VariablePromotionRow>> {
    const envelope = await pageEnvelope(this.db, actor.accountId, pageId);
    return { ...envelope, items: await variablesRepository.listPromotions(this.db, actor.accountId, pageId) };
  }
}
