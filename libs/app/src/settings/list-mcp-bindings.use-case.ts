import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { projectSettingsRepository, type Db, type McpBindingRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';

/** `GET /projects/:id/settings/mcp-bindings` (`project.config.read`): every binding, oldest first. */
@Injectable()
export class ListMcpBindingsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<McpBindingRow[]> {
    const { project } = await this.access.forRead(actor, projectId);
    return projectSettingsRepository.listMcpBindings(this.db, project.id);
  }
}
