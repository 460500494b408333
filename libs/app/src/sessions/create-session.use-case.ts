import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ID_PREFIX, newId } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  accountsRepository,
  inTransaction,
  projectsRepository,
  sessionsRepository,
  type Db,
  type ProjectRow,
  type SessionRow,
  type Tx,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireLiveAccount } from '../accounts/account-rules';
import { lockActiveProject } from '../projects/project-guards';
import { startSessionConversation } from '../conversation/session-conversation';
import { sessionRef, type SessionBindingsInput } from './session-access';
import { resolveSessionBindings } from './session-bindings';

export const DEFAULT_SESSION_TITLE = 'New session';

export interface CreateSessionInput extends SessionBindingsInput {
  title?: string;
  project_id?: string;
  /** Default true: the bound character's first message becomes the greeting floor (floor 0 of `main`). */
  greeting?: boolean;
}

/**
 * `POST /sessions` (spec 1 "What the service does" 1). Without `project_id` the session goes into the
 * account's default Workspace with a new `session_default` Project of its own, created in the same
 * transaction; only the account's default Client may do that, since no other Client would own the new
 * Project. With `project_id` the caller needs `project.session.write` there (non-member 404
 * `project_not_found`, observer/deriver 403 `project_access_denied`) and the Project must be active.
 */
@Injectable()
export class CreateSessionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateSessionInput): Promise<SessionRow> {
    return inTransaction(this.db, ({ tx }) =>
      createSessionInTransaction(tx, actor, input, {
        access: this.access,
        operationLogs: this.operationLogs,
      }),
    );
  }
}

/**
 * The body of `POST /sessions` inside the caller's transaction, so another write (a character import
 * with `create_session`) and the session commit or fail together.
 */
export async function createSessionInTransaction(
  tx: Tx,
  actor: Actor,
  input: CreateSessionInput,
  deps: { access: ProjectAccess; operationLogs: OperationLogWriter },
): Promise<SessionRow> {
  const title = input.title ?? DEFAULT_SESSION_TITLE;
  const now = Date.now();
  let project: ProjectRow;
  if (input.project_id != null) {
    const granted = await deps.access.require(actor, input.project_id, 'project.session.write', { db: tx });
    project = await lockActiveProject(tx, granted.project.id);
  } else {
    // The session's own Project belongs to the caller's account, which must still be there.
    await requireLiveAccount(tx, actor.accountId);
    if (!actor.clientIsDefault) {
      throw new DomainError(
        'project_access_denied',
        403,
        'Only the account’s default Client can create a session with its own Project; pass the project_id of a Project this Client may write to',
      );
    }
    const workspace = await accountsRepository.findDefaultWorkspace(tx, actor.accountId);
    if (!workspace) throw new Error(`account ${actor.accountId} has no default Workspace`);
    project = await projectsRepository.insertProject(tx, {
      id: newId(ID_PREFIX.project),
      workspace_id: workspace.id,
      account_id: actor.accountId,
      name: title,
      description: null,
      kind: 'session_default',
      status: 'active',
      settings_override: null,
      created_at: now,
      updated_at: now,
    });
  }
  // Bound assets must be live assets of the account that owns the Project (404 with the asset's code).
  const bindings = await resolveSessionBindings(tx, project.account_id, input);
  const session = await sessionsRepository.insertSession(tx, {
    id: newId(ID_PREFIX.session),
    // The session belongs to the account that owns its Project.
    account_id: project.account_id,
    workspace_id: project.workspace_id,
    project_id: project.id,
    title,
    status: 'active',
    character_id: bindings.character_id ?? null,
    character_version_id: bindings.character_version_id ?? null,
    user_card_id: bindings.user_card_id ?? null,
    preset_id: bindings.preset_id ?? null,
    worldbook_ids: JSON.stringify(bindings.worldbook_ids ?? []),
    regex_profile_id: bindings.regex_profile_id ?? null,
    created_by_client_id: actor.clientId,
    archived_at: null,
    created_at: now,
    updated_at: now,
  });
  // The `main` branch and the greeting floor commit or fail with the session.
  const conversation = await startSessionConversation(tx, session, { greeting: input.greeting ?? true });
  await deps.operationLogs.write(tx, actor, {
    action: 'create_session',
    account_id: session.account_id,
    workspace_id: session.workspace_id,
    project_id: session.project_id,
    session_id: session.id,
    target_type: 'session',
    target_id: session.id,
    after_ref: sessionRef(session),
    metadata: {
      placement: input.project_id == null ? 'new_session_default_project' : 'project',
      greeting: input.greeting ?? true,
      main_branch_id: conversation.branch.id,
      greeting_floor_id: conversation.greetingFloor?.id ?? null,
    },
  });
  return session;
}
