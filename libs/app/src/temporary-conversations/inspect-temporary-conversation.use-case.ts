import { Inject, Injectable } from '@nestjs/common';
import { isAgentPrivate } from '@hearth/domain';
import { ProjectAccess, roleAllows, type Actor } from '@hearth/permissions';
import type { Db, TemporaryConversationRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { FloorWithPages } from '../conversation/floor-reads';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { conversationLogScope, requireConversation } from './temporary-conversation-access';
import { readTemporaryTranscript } from './temporary-transcript';

export interface TemporaryInspection {
  conversation: TemporaryConversationRow;
  agent_private: boolean;
  /** True when message bodies, reasoning and origin are withheld (agent-private, no full-body grant). */
  transcript_restricted: boolean;
  floors: FloorWithPages[];
}

/**
 * `GET /temporary-conversations/:id/inspect` (spec 2): the audit view, for any member of the Project,
 * in any status, `internal` conversations included. An agent-private conversation (`internal`, or with
 * an agent origin) is restricted: message contents, reasoning and the origin are withheld (the view
 * gives lengths), unless the caller holds `project.session.write` (the owner) and asks
 * `include_agent_private`: then full bodies, and a `temporary_conversation.transcript_inspect` audit
 * log. Other conversations are never trimmed.
 */
@Injectable()
export class InspectTemporaryConversationUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    conversationId: string,
    includeAgentPrivate: boolean,
  ): Promise<TemporaryInspection> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.read',
      { allowInternal: true },
    );
    const agentPrivate = isAgentPrivate(grant.conversation);
    const full = agentPrivate && includeAgentPrivate && roleAllows(grant.role, 'project.session.write');
    const floors = await readTemporaryTranscript(this.db, conversationId);
    if (full)
      await this.logs.write(this.db, actor, {
        action: 'temporary_conversation.transcript_inspect',
        ...conversationLogScope(grant.conversation),
        metadata: {
          include_agent_private: true,
          visibility: grant.conversation.visibility,
          floor_count: floors.length,
        },
      });
    return {
      conversation: grant.conversation,
      agent_private: agentPrivate,
      transcript_restricted: agentPrivate && !full,
      floors,
    };
  }
}
