import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSession } from '../sessions/session-access';
import { EffectiveConfigReader, type EffectiveConfigView } from './effective-config-reader';

/**
 * `GET /sessions/:id/effective-config` (`project.config.read` on the session's Project): the Project's
 * view for this session. A legacy session route: missing or non-member 404 `not_found`. Like other
 * single-session reads it keeps working when the Project is archived.
 */
@Injectable()
export class GetSessionEffectiveConfigUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly reader: EffectiveConfigReader,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<EffectiveConfigView> {
    const { session, project } = await requireSession(
      this.access,
      this.db,
      actor,
      sessionId,
      'project.config.read',
    );
    return this.reader.read(project, session.id);
  }
}
