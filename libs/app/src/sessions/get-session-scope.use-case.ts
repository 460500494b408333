import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor, type ProjectRole } from '@hearth/permissions';
import { workspacesRepository, type Db, type ProjectRow, type WorkspaceRecord } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSession } from './session-access';

export interface SessionScope {
  sessionId: string;
  workspace: WorkspaceRecord;
  project: ProjectRow;
  role: ProjectRole;
}

/** `GET /sessions/:id/scope`: the Workspace and Project of a session, for any member. */
@Injectable()
export class GetSessionScopeUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<SessionScope> {
    const { session, project, role } = await requireSession(
      this.access,
      this.db,
      actor,
      sessionId,
      'project.read',
    );
    const workspace = await workspacesRepository.findWorkspace(this.db, project.workspace_id);
    if (!workspace) throw new Error(`Workspace ${project.workspace_id} of Project ${project.id} is missing`);
    return { sessionId: session.id, workspace, project, role };
  }
}
