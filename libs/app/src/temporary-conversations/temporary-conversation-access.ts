import { conversationNotActive, conversationNotFound, isDue } from '@hearth/domain';
import type { Actor, ProjectAccess, ProjectCapability, ProjectRole } from '@hearth/permissions';
import {
  inTransaction,
  temporaryConversationsRepository,
  type Db,
  type ProjectRow,
  type SessionRow,
  type TemporaryConversationRow,
} from '@hearth/persistence';
import type { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ensureProjectActive } from '../projects/project-guards';

export interface ConversationGrant {
  conversation: TemporaryConversationRow;
  session: SessionRow;
  project: ProjectRow;
  role: ProjectRole;
}

/**
 * A temporary conversation the caller may act on with `capability` (spec 2 "Temporary
 * conversations"): a missing one, one of a Project the caller is not a member of, and (unless
 * `allowInternal`, which only inspect passes) an `internal` one all answer 404
 * `conversation_not_found`; a member lacking the capability gets 403 `project_access_denied`; an
 * archived Project 409 `project_archived`. Then the lazy expiry: an `active` `ttl` conversation past
 * `expires_at` moves to `expired` first (one conditional update with its operation log), so every
 * route answers for the state it is really in.
 */
export async function requireConversation(
  deps: { access: ProjectAccess; db: Db; logs: OperationLogWriter },
  actor: Actor,
  conversationId: string,
  capability: ProjectCapability,
  options: { allowInternal?: boolean } = {},
): Promise<ConversationGrant> {
  const { db } = deps;
  const [conversation, session] = await Promise.all([
    temporaryConversationsRepository.find(db, conversationId),
    temporaryConversationsRepository.findSession(db, conversationId),
  ]);
  if (!conversation || !session) throw conversationNotFound();
  // Before the role check: a member whose role lacks the capability must not learn that an
  // `internal` conversation exists (403 would tell).
  if (conversation.visibility === 'internal' && !options.allowInternal) throw conversationNotFound();
  const { project, role } = await deps.access.require(actor, conversation.project_id, capability, {
    db,
    notFoundCode: 'conversation_not_found',
    notFoundMessage: conversationNotFound().message,
  });
  ensureProjectActive(project);
  const current = await expireIfDue(deps, conversation, Date.now());
  return { conversation: current, session, project, role };
}

/** Appending, generating, transcript, export and the terminal moves need `active` (409 otherwise). */
export function ensureActive(grant: ConversationGrant): void {
  if (grant.conversation.status !== 'active')
    throw conversationNotActive(grant.conversation.session_id, grant.conversation.status);
}

/** The lazy TTL check: `active` → `expired` atomically when due, with a `temporary_conversation.expire` log. */
async function expireIfDue(
  deps: { db: Db; logs: OperationLogWriter },
  conversation: TemporaryConversationRow,
  now: number,
): Promise<TemporaryConversationRow> {
  if (!isDue(conversation, now)) return conversation;
  const expired = await inTransaction(deps.db, async ({ tx }) => {
    const row = await temporaryConversationsRepository.expireIfDue(tx, conversation.session_id, now);
    if (row)
      await deps.logs.write(tx, null, {
        action: 'temporary_conversation.expire',
        account_id: row.account_id,
        workspace_id: row.workspace_id,
        project_id: row.project_id,
        session_id: row.session_id,
        target_type: 'temporary_conversation',
        target_id: row.session_id,
        metadata: { trigger: 'lazy', expires_at: row.expires_at },
      });
    return row;
  });
  // Someone else moved it meanwhile (a terminal route or the scan): read what it is now.
  return (
    expired ?? (await temporaryConversationsRepository.find(deps.db, conversation.session_id)) ?? conversation
  );
}

/** The fields an operation log keeps of a conversation (references only, no bodies). */
export function conversationRef(conversation: TemporaryConversationRow): Record<string, unknown> {
  return {
    status: conversation.status,
    retention_policy: conversation.retention_policy,
    visibility: conversation.visibility,
    source_session_id: conversation.source_session_id,
    expires_at: conversation.expires_at,
  };
}

/** The scope columns of a conversation's operation logs. */
export function conversationLogScope(conversation: TemporaryConversationRow) {
  return {
    account_id: conversation.account_id,
    workspace_id: conversation.workspace_id,
    project_id: conversation.project_id,
    session_id: conversation.session_id,
    target_type: 'temporary_conversation',
    target_id: conversation.session_id,
  };
}
