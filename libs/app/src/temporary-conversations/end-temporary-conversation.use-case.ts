import { Inject, Injectable } from '@nestjs/common';
import { conversationNotActive, TERMINAL_MOVE_STATUS, type TemporaryTerminalMove } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  conversationRepository,
  generationRunsRepository,
  inTransaction,
  temporaryConversationsRepository,
  type Db,
  type TemporaryConversationRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { RunRegistry } from '../turns/runs/run-registry';
import {
  conversationLogScope,
  conversationRef,
  ensureActive,
  requireConversation,
} from './temporary-conversation-access';

/**
 * `POST /temporary-conversations/:id/finalize`, `/discard`, `/cancel` (spec 2 leaves them "not shown";
 * docs/decisions.md "Temporary conversations"): owner only, only from `active` (409
 * `conversation_not_active`), a conditional update setting the status and its `*_at`, with a
 * `temporary_conversation.<move>` operation log. Each move also asks a running generation to stop (it
 * then ends `cancelled` and leaves no floor): only an `active` conversation generates (spec 2).
 */
@Injectable()
export class EndTemporaryConversationUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly registry: RunRegistry,
  ) {}

  async execute(
    actor: Actor,
    conversationId: string,
    move: TemporaryTerminalMove,
  ): Promise<TemporaryConversationRow> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.session.write',
    );
    ensureActive(grant);
    const status = TERMINAL_MOVE_STATUS[move];
    const { moved, runId } = await inTransaction(this.db, async ({ tx }) => {
      const row = await temporaryConversationsRepository.moveToTerminal(
        tx,
        conversationId,
        status,
        Date.now(),
      );
      if (!row) {
        const now = await temporaryConversationsRepository.find(tx, conversationId);
        throw conversationNotActive(conversationId, now?.status ?? 'gone');
      }
      const branch = await conversationRepository.findBranchByName(tx, conversationId, MAIN_BRANCH);
      const running = branch ? await generationRunsRepository.findRunningOfBranch(tx, branch.id) : undefined;
      await this.logs.write(tx, actor, {
        action: `temporary_conversation.${move}`,
        ...conversationLogScope(row),
        before_ref: conversationRef(grant.conversation),
        after_ref: conversationRef(row),
        metadata: { aborted_run_id: running?.id ?? null },
      });
      return { moved: row, runId: running?.id ?? null };
    });
    if (runId) await this.registry.requestCancel(runId);
    return moved;
  }
}
