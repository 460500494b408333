import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { toolPoliciesRepository, type Db, type ToolPolicyRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { registryWorkspace } from '../settings/workspace-registry';

/** `GET /tool-policies`: the policies of the caller's default Workspace, oldest first. */
@Injectable()
export class ListToolPoliciesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor): Promise<ToolPolicyRow[]> {
    const workspace = await registryWorkspace(this.db, actor);
    return toolPoliciesRepository.listOfWorkspace(this.db, workspace.id);
  }
}
