import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, inTransaction, type BranchWithHead, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireSession } from '../sessions/session-access';
import { ensureConversationWritable, requireBranchOfSession } from './conversation-access';
import {
  floorNotCommitted,
  floorNotFound,
  floorNotInBranch,
  generationConflict,
} from './conversation-errors';
import { isInLineage, lineageFloors } from './floor-reads';

/**
 * `POST /sessions/:id/branches/:branchId/reset {floor_id}`: moves the branch head back to a floor of
 * its lineage (409 `floor_not_in_branch` otherwise; 404 `floor_not_found` for a floor not of this
 * session). The floors this branch made after that floor are marked superseded (`superseded_at`,
 * `superseded_by_floor_id` = the new head) and leave its transcript; they stay readable by id and other
 * branches made from them keep them. Refused while the branch is generating (409
 * `generation_conflict`). Resetting to the current head changes nothing and writes nothing. Writes
 * operation log `reset_branch`.
 */
@Injectable()
export class ResetBranchUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, sessionId: string, branchId: string, floorId: string): Promise<BranchWithHead> {
    return inTransaction(this.db, async ({ tx }) => {
      const grant = await requireSession(this.access, tx, actor, sessionId, 'project.session.write', {
        lock: true,
      });
      ensureConversationWritable(grant);
      const { session } = grant;
      const branch = await requireBranchOfSession(tx, session.id, branchId, { lock: true });
      const target = await conversationRepository.findFloor(tx, floorId);
      if (!target || target.session_id !== session.id) throw floorNotFound();
      if (await conversationRepository.findGeneratingFloor(tx, branch.id))
        throw generationConflict(branch.id);
      const head = branch.head_floor_id
        ? await conversationRepository.findFloor(tx, branch.head_floor_id)
        : undefined;
      if (!head || !(await isInLineage(tx, head, target))) throw floorNotInBranch(target.id, branch.id);
      if (target.state !== 'committed') throw floorNotCommitted(target.id, target.state);
      if (target.id !== head.id) {
        const now = Date.now();
        const later = await lineageFloors(tx, head, target.floor_no + 1, head.floor_no);
        const superseded = await conversationRepository.supersedeBranchFloors(
          tx,
          branch.id,
          later.map((f) => f.id),
          target.id,
          now,
        );
        await conversationRepository.moveBranchHead(tx, branch.id, head.id, target.id, now);
        await this.logs.write(tx, actor, {
          action: 'reset_branch',
          account_id: session.account_id,
          workspace_id: session.workspace_id,
          project_id: session.project_id,
          session_id: session.id,
          branch_id: branch.id,
          floor_id: target.id,
          target_type: 'session_branch',
          target_id: branch.id,
          before_ref: { head_floor_id: head.id, head_floor_no: head.floor_no },
          after_ref: { head_floor_id: target.id, head_floor_no: target.floor_no },
          metadata: { superseded_floor_count: superseded.length },
        });
      }
      const result = await conversationRepository.findBranchWithHead(tx, branch.id);
      if (!result) throw new Error(`branch ${branch.id} vanished`);
      return result;
    });
  }
}
