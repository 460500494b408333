import { Inject, Injectable } from '@nestjs/common';
import { conversationNotActive, DomainError, ID_PREFIX, newId } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  floorsRepository,
  inTransaction,
  pageStagedWritesRepository,
  temporaryConversationsRepository,
  type Db,
  type PageStagedWriteRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { pageNotFound } from '../conversation/conversation-errors';
import { loadFloorsWithPages } from '../conversation/floor-reads';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { conversationLogScope, ensureActive, requireConversation } from './temporary-conversation-access';

export const noExportableOutput = (conversationId: string) =>
  new DomainError('no_exportable_output', 409, 'The conversation has no committed output page to export', {
    conversation_id: conversationId,
  });

/**
 * `POST /temporary-conversations/:id/export` (spec 2): stages the conversation's latest committed
 * output page (its messages) as a candidate for a page of the source session, in `page_staged_writes`
 * (status `staged`); the target page is not changed. Owner only, `active` only. The target must be a
 * page of the conversation's source session (404 `page_not_found` otherwise; a conversation made from
 * a Project has no source session, so every page answers 404). No committed output yet: 409
 * `no_exportable_output`. One transaction with a `temporary_conversation.export` operation log.
 */
@Injectable()
export class ExportTemporaryConversationUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    conversationId: string,
    input: { target: 'page_staged_write'; target_page_id: string; reason: string },
  ): Promise<PageStagedWriteRow> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.session.write',
    );
    ensureActive(grant);
    const { conversation } = grant;
    const page = await floorsRepository.findPage(this.db, input.target_page_id);
    if (
      !page ||
      conversation.source_session_id === null ||
      page.session_id !== conversation.source_session_id
    )
      throw pageNotFound();
    const source = await temporaryConversationsRepository.latestOutputPage(this.db, conversationId);
    if (!source) throw noExportableOutput(conversationId);
    const floor = await floorsRepository.findFloor(this.db, source.floor_id);
    const [loaded] = floor ? await loadFloorsWithPages(this.db, [floor]) : [];
    const messages = loaded?.pages.find((p) => p.page.id === source.page_id)?.messages ?? [];
    return inTransaction(this.db, async ({ tx }) => {
      // Still `active` now, under a share lock: a terminal move waits for the export or comes first.
      const status = await temporaryConversationsRepository.statusForShare(tx, conversationId);
      if (status !== 'active') throw conversationNotActive(conversationId, status ?? 'gone');
      const row = await pageStagedWritesRepository.insert(tx, {
        id: newId(ID_PREFIX.pageStagedWrite),
        account_id: conversation.account_id,
        project_id: conversation.project_id,
        session_id: page.session_id,
        target_page_id: page.id,
        source_kind: 'temporary_conversation',
        source_conversation_id: conversationId,
        source_page_id: source.page_id,
        source_job_id: null,
        target: 'page_staged_write',
        status: 'staged',
        reason: input.reason,
        content: JSON.stringify(messages.map((m) => ({ role: m.role, content: m.content }))),
        created_by_client_id: actor.clientId,
        created_at: Date.now(),
      });
      await this.logs.write(tx, actor, {
        action: 'temporary_conversation.export',
        ...conversationLogScope(conversation),
        metadata: {
          target: 'page_staged_write',
          staged_write_id: row.id,
          target_page_id: page.id,
          target_session_id: page.session_id,
          source_page_id: source.page_id,
          reason_length: input.reason.length,
          message_count: messages.length,
        },
      });
      return row;
    });
  }
}
