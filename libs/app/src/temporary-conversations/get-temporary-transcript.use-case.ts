import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { FloorWithPages } from '../conversation/floor-reads';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ensureActive, requireConversation } from './temporary-conversation-access';
import { readTemporaryTranscript } from './temporary-transcript';

/**
 * `GET /temporary-conversations/:id/transcript` (spec 2): the floors of `main` with their pages and
 * messages, for any member of the Project; only while `active` (409 `conversation_not_active`).
 */
@Injectable()
export class GetTemporaryTranscriptUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    conversationId: string,
  ): Promise<{ conversation_id: string; floors: FloorWithPages[] }> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.read',
    );
    ensureActive(grant);
    return {
      conversation_id: conversationId,
      floors: await readTemporaryTranscript(this.db, conversationId),
    };
  }
}
