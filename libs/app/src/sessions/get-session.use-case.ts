import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { type Db, type SessionRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSession } from './session-access';

/** `GET /sessions/:id`: any member of the session's Project; others 404 `not_found`. */
@Injectable()
export class GetSessionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<SessionRow> {
    return (await requireSession(this.access, this.db, actor, sessionId, 'project.read')).session;
  }
}
