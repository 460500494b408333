import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireFloor } from './conversation-access';
import { loadFloorsWithPages, type FloorWithPages } from './floor-reads';

/** `GET /floors/:id`: the floor with every page and message; members read, others 404 `floor_not_found`. */
@Injectable()
export class GetFloorUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, floorId: string): Promise<FloorWithPages> {
    const { floor } = await requireFloor(this.access, this.db, actor, floorId, 'project.read');
    const [loaded] = await loadFloorsWithPages(this.db, [floor]);
    return loaded;
  }
}
