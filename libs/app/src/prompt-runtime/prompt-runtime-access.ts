import { DomainError } from '@hearth/domain';
import type { Actor, ProjectAccess, ProjectRole } from '@hearth/permissions';
import {
  conversationRepository,
  promptRuntimeRepository,
  sessionsRepository,
  type BranchesTable,
  type Executor,
  type ProjectRow,
  type PromptRuntimeScope,
  type SessionRow,
  type Tx,
} from '@hearth/persistence';
import type { Selectable } from 'kysely';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { ensureProjectActive } from '../projects/project-guards';

export interface PromptRuntimeTarget {
  session: SessionRow;
  project: ProjectRow;
  role: ProjectRole;
  /** The branch of a branch-level route (materialised), else null. */
  branch: Selectable<BranchesTable> | null;
  scope: PromptRuntimeScope;
}

const sessionNotFound = () => new DomainError('session_not_found', 404, 'Session not found');
const branchNotFound = () => new DomainError('branch_not_found', 404, 'Branch not found');

/**
 * The one gate of the prompt runtime policy and injection routes (docs/decisions.md "Prompt runtime
 * policy and injections"): a missing session or one of a Project the caller is not a member of answers
 * 404 `session_not_found`; reads need `project.read` (every member), writes `project.session.write`
 * (owner; others 403 `project_access_denied`). A branch route needs a branch of that session (by id, or
 * `main` by name) with a floor of its own (404 `branch_not_found` otherwise). Writes lock the session row for the rest of the
 * transaction (serialising version bumps and quota counts) and refuse an archived Project (409
 * `project_archived`) or session (409 `session_archived`).
 */
export async function requirePromptRuntimeTarget(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  sessionId: string,
  branchId: string | null,
  mode: 'read' | 'write',
): Promise<PromptRuntimeTarget> {
  const session =
    mode === 'write'
      ? await promptRuntimeRepository.lockSession(db as Tx, sessionId)
      : await sessionsRepository.findSession(db, sessionId);
  if (!session) throw sessionNotFound();
  const { project, role } = await access.require(
    actor,
    session.project_id,
    mode === 'write' ? 'project.session.write' : 'project.read',
    { db, notFoundCode: 'session_not_found', notFoundMessage: sessionNotFound().message },
  );
  let branch: Selectable<BranchesTable> | null = null;
  if (branchId !== null) {
    // `main` names the session's default branch (spec 2), like a turn's branch_id.
    branch =
      (branchId === MAIN_BRANCH
        ? await conversationRepository.findBranchByName(db, session.id, MAIN_BRANCH)
        : await promptRuntimeRepository.findBranchOfSession(db, session.id, branchId)) ?? null;
    if (!branch || !(await promptRuntimeRepository.isBranchMaterialised(db, branch.id)))
      throw branchNotFound();
  }
  if (mode === 'write') {
    ensureProjectActive(project);
    if (session.status === 'archived')
      throw new DomainError(
        'session_archived',
        409,
        'The session is archived; set status to active to change it',
      );
  }
  return { session, project, role, branch, scope: { sessionId: session.id, branchId: branch?.id ?? null } };
}

/** Who wrote a record: the account for its default Client, else the Client. */
export const promptRuntimeWriterId = (actor: Actor): string =>
  actor.kind === 'account' ? actor.accountId : actor.clientId;

/** The operation log columns locating a prompt runtime change. */
export function promptRuntimeLogScope(target: PromptRuntimeTarget) {
  return {
    account_id: target.session.account_id,
    workspace_id: target.session.workspace_id,
    project_id: target.session.project_id,
    session_id: target.session.id,
    branch_id: target.branch?.id ?? null,
  };
}
