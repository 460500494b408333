import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { toolPoliciesRepository, type Db, type ToolPolicyRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { registryWorkspace } from '../settings/workspace-registry';
import { toolPolicyNotFound } from './tool-policy-rules';

/** `GET /tool-policies/:id`: a policy of the caller's default Workspace, else 404 `not_found`. */
@Injectable()
export class GetToolPolicyUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<ToolPolicyRow> {
    const workspace = await registryWorkspace(this.db, actor);
    const policy = await toolPoliciesRepository.findInWorkspace(this.db, workspace.id, id);
    if (!policy) throw toolPolicyNotFound();
    return policy;
  }
}
