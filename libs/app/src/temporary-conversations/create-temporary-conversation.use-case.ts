import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ID_PREFIX, newId, normaliseRetention, sourceDigest } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  projectsRepository,
  sessionsRepository,
  temporaryConversationsRepository,
  type Db,
  type ProjectRow,
  type SessionRow,
  type TemporaryConversationRow,
  type Tx,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readBranchHistory } from '../conversation/floor-reads';
import { ensureMainBranch, startSessionConversation } from '../conversation/session-conversation';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ensureProjectActive } from '../projects/project-guards';
import { conversationLogScope, conversationRef } from './temporary-conversation-access';

/** The session title of a conversation created without one (the resource's `title` stays null). */
export const TEMPORARY_SESSION_TITLE = 'Temporary conversation';

export interface CreateTemporaryConversationInput {
  title?: string | null;
  purpose?: string | null;
  retention_policy?: unknown;
  ttl_seconds?: unknown;
}

/** Where a conversation comes from: a session (its bindings are copied) or a Project (none). */
export type TemporarySource = { session_id: string } | { project_id: string };

export interface CreateInternalTemporaryConversationInput extends CreateTemporaryConversationInput {
  source: TemporarySource;
  /** What made it (an agent run: agent type, binding, job ids); shown only to owners through inspect. */
  agent_origin?: Record<string, unknown> | null;
}

const sourceSessionNotFound = () =>
  new DomainError('source_session_not_found', 404, 'Source session not found');

/**
 * Creates a temporary conversation (spec 2): a session of kind `temporary` in the source's Project with
 * an empty `main` branch, and its `temporary_conversations` row (`active`; `expires_at` = created_at +
 * ttl_seconds for policy `ttl`), with a `temporary_conversation.create` operation log, in one
 * transaction. From a session (`POST /sessions/:id/temporary-conversations`) the session's bindings
 * (character and version, user card, preset, worldbooks, regex profile) are copied, never its
 * history, and `source_snapshot.digest` fingerprints the source's `main` transcript at that moment.
 * The caller needs `project.session.write` (the owner).
 */
@Injectable()
export class CreateTemporaryConversationUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  /** `POST /sessions/:id/temporary-conversations`: unknown or invisible session 404 `source_session_not_found`. */
  fromSession(actor: Actor, sessionId: string, input: CreateTemporaryConversationInput) {
    return this.create(actor, { ...input, source: { session_id: sessionId } }, 'client_visible');
  }

  /** `POST /projects/:id/temporary-conversations`: unknown or invisible Project 404 `project_not_found`. */
  fromProject(actor: Actor, projectId: string, input: CreateTemporaryConversationInput) {
    return this.create(actor, { ...input, source: { project_id: projectId } }, 'client_visible');
  }

  /**
   * An `internal` conversation (agent-made; no HTTP route creates one): the public routes answer it
   * 404 and only inspect reads it. A source that does not exist answers 404
   * `source_session_not_found` / `source_project_not_found`.
   */
  internal(actor: Actor, input: CreateInternalTemporaryConversationInput) {
    return this.create(actor, input, 'internal');
  }

  private async create(
    actor: Actor,
    input: CreateInternalTemporaryConversationInput,
    visibility: 'client_visible' | 'internal',
  ): Promise<TemporaryConversationRow> {
    const retention = normaliseRetention(input.retention_policy, input.ttl_seconds);
    return inTransaction(this.db, async ({ tx }) => {
      const { project, source } = await this.resolveSource(tx, actor, input.source, visibility);
      ensureProjectActive(project);
      const now = Date.now();
      const session = await sessionsRepository.insertSession(tx, {
        id: newId(ID_PREFIX.session),
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        title: input.title ?? TEMPORARY_SESSION_TITLE,
        status: 'active',
        character_id: source?.character_id ?? null,
        character_version_id: source?.character_version_id ?? null,
        user_card_id: source?.user_card_id ?? null,
        preset_id: source?.preset_id ?? null,
        worldbook_ids: JSON.stringify(source?.worldbook_ids ?? []),
        regex_profile_id: source?.regex_profile_id ?? null,
        created_by_client_id: actor.clientId,
        archived_at: null,
        created_at: now,
        updated_at: now,
        kind: 'temporary',
      });
      await startSessionConversation(tx, session, { greeting: false });
      const digest = source
        ? sourceDigest((await readBranchHistory(tx, await ensureMainBranch(tx, source))).messages)
        : null;
      const conversation = await temporaryConversationsRepository.insert(tx, {
        session_id: session.id,
        account_id: session.account_id,
        workspace_id: session.workspace_id,
        project_id: session.project_id,
        source_session_id: source?.id ?? null,
        title: input.title ?? null,
        purpose: input.purpose ?? null,
        status: 'active',
        retention_policy: retention.retention_policy,
        ttl_seconds: retention.ttl_seconds,
        visibility,
        source_snapshot: JSON.stringify({ digest, source_session_id: source?.id ?? null }),
        agent_origin: input.agent_origin ? JSON.stringify(input.agent_origin) : null,
        created_by_client_id: actor.clientId,
        created_at: now,
        updated_at: now,
        last_activity_at: now,
        expires_at: retention.ttl_seconds === null ? null : now + retention.ttl_seconds * 1000,
        finalized_at: null,
        discarded_at: null,
        cancelled_at: null,
        expired_at: null,
        cleaned_at: null,
      });
      await this.logs.write(tx, actor, {
        action: 'temporary_conversation.create',
        ...conversationLogScope(conversation),
        after_ref: conversationRef(conversation),
        metadata: {
          source: source ? 'session' : 'project',
          title_length: input.title?.length ?? 0,
          purpose_length: input.purpose?.length ?? 0,
          agent_origin: input.agent_origin ? true : false,
        },
      });
      return conversation;
    });
  }

  private async resolveSource(
    tx: Tx,
    actor: Actor,
    source: TemporarySource,
    visibility: 'client_visible' | 'internal',
  ): Promise<{ project: ProjectRow; source: SessionRow | null }> {
    if ('session_id' in source) {
      // Key-share locked: a concurrent delete of the source comes first (404) or waits for the draft.
      const session = await sessionsRepository.findSessionForKeyShare(tx, source.session_id);
      if (!session) throw sourceSessionNotFound();
      const { project } = await this.access.require(actor, session.project_id, 'project.session.write', {
        db: tx,
        notFoundCode: 'source_session_not_found',
        notFoundMessage: sourceSessionNotFound().message,
      });
      return { project, source: session };
    }
    if (visibility === 'internal' && !(await projectsRepository.findProject(tx, source.project_id)))
      throw new DomainError('source_project_not_found', 404, 'Source Project not found');
    const { project } = await this.access.require(actor, source.project_id, 'project.session.write', {
      db: tx,
    });
    return { project, source: null };
  }
}
