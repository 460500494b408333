import { Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { SettingsAccess } from '../settings/settings-access';
import { EffectiveConfigReader, type EffectiveConfigView } from './effective-config-reader';

/**
 * `GET /projects/:id/effective-config` (`project.config.read`, every member): the merged view with
 * the source layer of every value. An archived Project answers 409 `project_archived`, like every
 * settings read.
 */
@Injectable()
export class GetProjectEffectiveConfigUseCase {
  constructor(
    private readonly access: SettingsAccess,
    private readonly reader: EffectiveConfigReader,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<EffectiveConfigView> {
    const { project } = await this.access.forRead(actor, projectId);
    return this.reader.read(project, null);
  }
}
