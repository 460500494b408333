import { Inject, Injectable } from '@nestjs/common';
import type { ReplayPolicy } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { clientDataRepository, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireFloor } from '../conversation/conversation-access';
import { requireClientDataEnabled } from './client-data-rules';

export interface FloorSessionStateWrite {
  id: string;
  namespace: string;
  slot: string;
  present: boolean;
  /** null for a delete. */
  value: unknown;
  seq: number;
  /** The namespace's current replay policy (what a retry of the floor would meet). */
  replay_policy: ReplayPolicy;
  created_at: number;
}

/**
 * `GET /floors/:id/session-state-writes`: the writes the floor's turn landed, in request order, each
 * with its namespace's replay policy. Access as `GET /floors/:id`: members read, others 404
 * `floor_not_found`.
 */
@Injectable()
export class ListFloorSessionStateWritesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, floorId: string): Promise<FloorSessionStateWrite[]> {
    requireClientDataEnabled(this.config);
    const { floor } = await requireFloor(this.access, this.db, actor, floorId, 'project.read');
    const writes = await clientDataRepository.landedWritesOfFloor(this.db, floor.id);
    return writes.map((w) => ({
      id: w.id,
      namespace: w.namespace,
      slot: w.slot,
      present: w.present,
      value: w.value,
      seq: w.seq,
      replay_policy: w.replay_policy,
      created_at: w.created_at,
    }));
  }
}
