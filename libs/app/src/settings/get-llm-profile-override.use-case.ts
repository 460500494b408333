import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { projectSettingsRepository, type Db, type LlmProfileOverrideRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { SettingsAccess } from './settings-access';

/** `GET /projects/:id/settings/llm-profile-override` (`project.config.read`): the override or null. */
@Injectable()
export class GetLlmProfileOverrideUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: SettingsAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<LlmProfileOverrideRow | null> {
    const { project } = await this.access.forRead(actor, projectId);
    return (await projectSettingsRepository.findLlmOverride(this.db, project.id)) ?? null;
  }
}
