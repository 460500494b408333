import { Inject, Injectable } from '@nestjs/common';
import { checkTemporaryMessage, conversationNotActive } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { inTransaction, temporaryConversationsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { appendUserFloor } from '../conversation/floor-writes';
import { ensureMainBranch } from '../conversation/session-conversation';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { conversationBusy, isBusyError } from './temporary-turn-errors';
import { conversationLogScope, ensureActive, requireConversation } from './temporary-conversation-access';

export interface AppendedTemporaryMessage {
  conversation_id: string;
  floor_id: string;
  page_id: string;
  message_id: string;
  seq: number;
  role: string;
}

/**
 * `POST /temporary-conversations/:id/messages` (spec 2): appends one committed floor to `main` with one
 * page holding the one message (role `user`, `assistant` or `system`), no generation. Owner only;
 * `active` only (409 `conversation_not_active`); a running generation answers 409
 * `conversation_busy`. The append, the activity time and a `temporary_conversation.append_message`
 * operation log (lengths only) are one transaction, which re-checks `active` under the row's lock.
 */
@Injectable()
export class AppendTemporaryMessageUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    conversationId: string,
    input: { role: unknown; content: unknown },
    /** `allowInternal`: the app layer (an agent) writing to its `internal` conversation; no route passes it. */
    options: { allowInternal?: boolean } = {},
  ): Promise<AppendedTemporaryMessage> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.session.write',
      options,
    );
    const message = checkTemporaryMessage(input.role, input.content);
    ensureActive(grant);
    return inTransaction(this.db, async ({ tx }) => {
      const now = Date.now();
      const locked = await temporaryConversationsRepository.lock(tx, conversationId);
      if (!locked || locked.status !== 'active')
        throw conversationNotActive(conversationId, locked?.status ?? 'gone');
      const branch = await ensureMainBranch(tx, grant.session);
      const appended = await appendUserFloor(tx, {
        session: grant.session,
        branchId: branch.id,
        messages: [{ role: message.role, content: message.content, source: 'temporary_message' }],
        state: 'committed',
        now,
      }).catch((error: unknown) => {
        throw isBusyError(error) ? conversationBusy(conversationId) : error;
      });
      await temporaryConversationsRepository.touch(tx, conversationId, now);
      const written = appended.input.messages[0];
      await this.logs.write(tx, actor, {
        action: 'temporary_conversation.append_message',
        ...conversationLogScope(grant.conversation),
        branch_id: branch.id,
        floor_id: appended.floor.id,
        metadata: {
          role: message.role,
          content_length: message.content.length,
          floor_no: appended.floor.floor_no,
        },
      });
      return {
        conversation_id: conversationId,
        floor_id: appended.floor.id,
        page_id: appended.input.page.id,
        message_id: written.id,
        seq: written.seq,
        role: written.role,
      };
    });
  }
}
