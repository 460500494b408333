import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ensureConversationWritable, requirePage } from './conversation-access';
import { floorNotCommitted } from './conversation-errors';
import { loadFloorsWithPages, type FloorWithPages } from './floor-reads';

/**
 * `POST /pages/:id/activate` (the swipe): makes the page the active one of its kind on its floor and
 * answers the floor with its pages. The floor row is locked and the switch is two conditional updates
 * (others off, this one on where it is off), so concurrent switches take turns and a floor never has two
 * active pages of a kind (a partial unique index backs that). The floor must be committed (409
 * `floor_not_committed`). Activating the active page changes nothing and writes nothing. Writes
 * operation log `activate_page`.
 */
@Injectable()
export class ActivatePageUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, pageId: string): Promise<FloorWithPages> {
    return inTransaction(this.db, async ({ tx }) => {
      const grant = await requirePage(this.access, tx, actor, pageId, 'project.session.write', {
        lock: true,
      });
      ensureConversationWritable(grant);
      const { floor, session } = grant;
      if (floor.state !== 'committed') throw floorNotCommitted(floor.id, floor.state);
      const pages = await conversationRepository.pagesOfFloor(tx, floor.id);
      const page = pages.find((p) => p.id === pageId) ?? grant.page;
      if (!page.is_active) {
        const now = Date.now();
        const previous = pages.find((p) => p.is_active && p.page_kind === page.page_kind) ?? null;
        await conversationRepository.deactivateOtherPages(tx, floor.id, page.page_kind, page.id, now);
        await conversationRepository.activatePage(tx, page.id, now);
        await conversationRepository.touchFloor(tx, floor.id, now);
        await this.logs.write(tx, actor, {
          action: 'activate_page',
          account_id: session.account_id,
          workspace_id: session.workspace_id,
          project_id: session.project_id,
          session_id: session.id,
          branch_id: floor.branch_id,
          floor_id: floor.id,
          target_type: 'page',
          target_id: page.id,
          before_ref: { active_page_id: previous?.id ?? null },
          after_ref: { active_page_id: page.id },
          metadata: { page_kind: page.page_kind, version: page.version },
        });
      }
      const refreshed = await conversationRepository.findFloor(tx, floor.id);
      const [loaded] = await loadFloorsWithPages(tx, [refreshed ?? floor]);
      return loaded;
    });
  }
}
