import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { pageStagedWritesRepository, type Db, type PageStagedWriteRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requirePage } from '../conversation/conversation-access';

export interface PageCandidates {
  page_id: string;
  floor_id: string;
  session_id: string;
  branch_id: string;
  items: PageStagedWriteRow[];
}

/**
 * `GET /pages/:pageId/staged-writes` (docs/decisions.md "Page candidates"): the candidates staged for
 * a page (temporary conversation exports and agent deliveries), oldest first. Every member of the
 * session's Project reads them; a page of another account, or of a temporary conversation, answers 404
 * `page_not_found`.
 */
@Injectable()
export class ListPageCandidatesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, pageId: string): Promise<PageCandidates> {
    const { page, floor } = await requirePage(this.access, this.db, actor, pageId, 'project.read');
    return {
      page_id: page.id,
      floor_id: floor.id,
      session_id: page.session_id,
      branch_id: floor.branch_id,
      items: await pageStagedWritesRepository.listOfPage(this.db, page.id),
    };
  }
}
