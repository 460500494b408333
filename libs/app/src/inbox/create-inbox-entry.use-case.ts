import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, requireInboxKind, requireInboxTitle, serialiseInboxBody } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inboxRepository, inTransaction, type Db, type InboxEntryRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { WriteOrigin } from '../events/write-origin';
import { InboxAccess } from './inbox-access';
import { InboxJournal } from './inbox-journal';
import { validateInboxEntrySources } from './inbox-sources';

export interface CreateInboxEntryInput {
  kind: string;
  title: string;
  /** Any JSON; `{}` when absent. */
  body?: unknown;
  source_session_id?: string | null;
  source_floor_id?: string | null;
  source_page_id?: string | null;
  derived_output_id?: string | null;
}

/**
 * `POST /projects/:id/inbox` (owner, deriver): a `pending` entry, its operation log and its Project
 * event in one transaction; the event wake-up is published after commit.
 */
@Injectable()
export class CreateInboxEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: InboxAccess,
    private readonly journal: InboxJournal,
  ) {}

  /** `origin`: a job's write (an Agent Job's delivery), recorded as such in its event and log. */
  async execute(
    actor: Actor,
    projectId: string,
    input: CreateInboxEntryInput,
    origin?: WriteOrigin,
  ): Promise<InboxEntryRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.inbox.create', uow.tx);
      const kind = requireInboxKind(input.kind);
      const title = requireInboxTitle(input.title);
      const body = serialiseInboxBody(input.body === undefined ? {} : input.body);
      const sources = {
        source_session_id: input.source_session_id ?? null,
        source_floor_id: input.source_floor_id ?? null,
        source_page_id: input.source_page_id ?? null,
        derived_output_id: input.derived_output_id ?? null,
      };
      await validateInboxEntrySources(uow.tx, project, sources);
      const now = Date.now();
      const entry = await inboxRepository.insert(uow.tx, {
        id: newId(ID_PREFIX.inboxEntry),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: project.account_id,
        created_by_account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        kind,
        title,
        body: body.json,
        body_byte_count: body.byteCount,
        ...sources,
        status: 'pending',
        decision_reason: null,
        decided_by_account_id: null,
        decided_by_client_id: null,
        decided_at: null,
        created_at: now,
        updated_at: now,
      });
      await this.journal.record(uow, actor, project, 'create', entry, origin);
      return entry;
    });
  }
}
