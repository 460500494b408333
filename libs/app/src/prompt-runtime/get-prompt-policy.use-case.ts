import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { promptRuntimeRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requirePromptRuntimeTarget } from './prompt-runtime-access';
import { toPromptPolicyView, type PromptPolicyView } from './prompt-policy-view';

/**
 * `GET /sessions/:id/prompt-runtime/policy` (`branchId` null) and
 * `GET /sessions/:id/prompt-runtime/branches/:branchId/policy`: any member of the session's Project.
 */
@Injectable()
export class GetPromptPolicyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, branchId: string | null): Promise<PromptPolicyView> {
    const target = await requirePromptRuntimeTarget(this.access, this.db, actor, sessionId, branchId, 'read');
    const session = await promptRuntimeRepository.findPolicy(this.db, {
      sessionId: target.session.id,
      branchId: null,
    });
    if (target.scope.branchId === null) return toPromptPolicyView(session, { session });
    const branch = await promptRuntimeRepository.findPolicy(this.db, target.scope);
    return toPromptPolicyView(branch, { session, branch });
  }
}
