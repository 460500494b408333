import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db, TemporaryConversationRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireConversation } from './temporary-conversation-access';

/**
 * `GET /temporary-conversations/:id`: the resource without transcript, for any member of its Project
 * (`project.read`). A `ttl` conversation past `expires_at` answers as `expired` (the lazy check).
 */
@Injectable()
export class GetTemporaryConversationUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, conversationId: string): Promise<TemporaryConversationRow> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.read',
    );
    return grant.conversation;
  }
}
