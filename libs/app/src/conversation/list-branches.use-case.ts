import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, type BranchWithHead, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSession } from '../sessions/session-access';
import { ensureMainBranch } from './session-conversation';

/** `GET /sessions/:id/branches`: every branch of the session, `main` first, with its head's floor_no. */
@Injectable()
export class ListBranchesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<BranchWithHead[]> {
    const { session } = await requireSession(this.access, this.db, actor, sessionId, 'project.read');
    await ensureMainBranch(this.db, session);
    return conversationRepository.listBranches(this.db, session.id);
  }
}
