import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { derivedOutputsRepository, type Db, type DerivedOutputRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { DerivedOutputAccess, derivedOutputNotFound } from './derived-output-access';

/** `GET /projects/:id/derived-outputs/:item_id` (every member). */
@Injectable()
export class GetDerivedOutputUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: DerivedOutputAccess,
  ) {}

  async execute(actor: Actor, projectId: string, itemId: string): Promise<DerivedOutputRow> {
    const { project } = await this.access.forRead(actor, projectId);
    const entry = await derivedOutputsRepository.findInProject(this.db, project.id, itemId);
    if (!entry) throw derivedOutputNotFound();
    return entry;
  }
}
