import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  conversationRepository,
  inTransaction,
  isUniqueViolation,
  sessionsRepository,
  type BranchRow,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ensureConversationWritable, requireFloor } from './conversation-access';
import { branchNameConflict, floorNotCommitted } from './conversation-errors';

export interface CreateBranchInput {
  /** 1-120 characters, unique in the session; default `branch-<n>` (the smallest free n from 1). */
  name?: string;
}

export interface CreatedBranch {
  branch: BranchRow;
}

/** The default name of a new branch: `branch-<n>` with the smallest n >= 1 no branch of the session has. */
export function defaultBranchName(taken: Iterable<string>): string {
  const names = new Set(taken);
  for (let n = 1; ; n++) {
    const name = `branch-${n}`;
    if (!names.has(name)) return name;
  }
}

/**
 * `POST /floors/:id/branch` (CONTRACT.md): a branch whose history ends at that floor (its source and
 * head), sharing every floor up to it. The floor must be committed (409 `floor_not_committed`); the
 * name is unique per session (409 `branch_name_conflict`). Needs `project.session.write` on an active
 * Project and an active session. Writes operation log `checkout_branch` (target `session_branch`).
 * The session row is locked, so concurrent default names do not collide.
 */
@Injectable()
export class CreateBranchUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, floorId: string, input: CreateBranchInput): Promise<CreatedBranch> {
    return inTransaction(this.db, async ({ tx }) => {
      const grant = await requireFloor(this.access, tx, actor, floorId, 'project.session.write');
      const { floor } = grant;
      ensureConversationWritable(grant);
      if (floor.state !== 'committed') throw floorNotCommitted(floor.id, floor.state);
      const session = await sessionsRepository.findSessionForUpdate(tx, floor.session_id);
      if (!session) throw new Error(`session ${floor.session_id} vanished`);
      const name =
        input.name ?? defaultBranchName(await conversationRepository.listBranchNames(tx, session.id));
      if (await conversationRepository.findBranchByName(tx, session.id, name)) throw branchNameConflict(name);
      const now = Date.now();
      let branch: BranchRow;
      try {
        branch = await conversationRepository.insertBranch(tx, {
          id: newId(ID_PREFIX.branch),
          account_id: session.account_id,
          session_id: session.id,
          name,
          source_floor_id: floor.id,
          head_floor_id: floor.id,
          created_at: now,
          updated_at: now,
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw branchNameConflict(name);
        throw error;
      }
      await this.logs.write(tx, actor, {
        action: 'checkout_branch',
        account_id: session.account_id,
        workspace_id: session.workspace_id,
        project_id: session.project_id,
        session_id: session.id,
        branch_id: branch.id,
        floor_id: floor.id,
        target_type: 'session_branch',
        target_id: branch.id,
        after_ref: { name, source_floor_id: floor.id, head_floor_id: floor.id },
        metadata: { source_branch_id: floor.branch_id, source_floor_no: floor.floor_no },
      });
      return { branch };
    });
  }
}
