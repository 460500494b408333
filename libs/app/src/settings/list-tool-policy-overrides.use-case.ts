import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { projectSettingsRepository, type Db, type ToolPolicyOverrideRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';

/** `GET /projects/:id/settings/tool-policy-overrides` (`project.config.read`): every override, oldest first. */
@Injectable()
export class ListToolPolicyOverridesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<ToolPolicyOverrideRow[]> {
    const { project } = await this.access.forRead(actor, projectId);
    return projectSettingsRepository.listToolPolicyOverrides(this.db, project.id);
  }
}
