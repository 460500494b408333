import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { sessionPromptSettingsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requirePromptRuntimeTarget } from '../prompt-runtime/prompt-runtime-access';
import { sessionPersonaPlacement } from './persona-placement';
import { toPromptSettingsView, type PromptSettingsView } from './prompt-settings-view';

/** `GET /sessions/:id/prompt-runtime/mode`: any member of the session's Project; others 404. */
@Injectable()
export class GetPromptSettingsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<PromptSettingsView> {
    const target = await requirePromptRuntimeTarget(this.access, this.db, actor, sessionId, null, 'read');
    const [row, card] = await Promise.all([
      sessionPromptSettingsRepository.find(this.db, target.session.id),
      sessionPersonaPlacement(this.db, target.session),
    ]);
    return toPromptSettingsView(target.session.id, row, card);
  }
}
