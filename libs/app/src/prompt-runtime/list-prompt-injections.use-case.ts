import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { promptRuntimeRepository, type Db, type PromptInjectionRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requirePromptRuntimeTarget } from './prompt-runtime-access';

/**
 * `GET .../prompt-runtime/injections` at session level (`branchId` null) or of one branch: the scope's
 * own records, oldest first; expired records (awaiting the maintenance scan) are left out.
 */
@Injectable()
export class ListPromptInjectionsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, branchId: string | null): Promise<PromptInjectionRow[]> {
    const target = await requirePromptRuntimeTarget(this.access, this.db, actor, sessionId, branchId, 'read');
    return promptRuntimeRepository.listInjections(this.db, target.scope, Date.now());
  }
}
