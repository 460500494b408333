import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { FloorPromptSnapshotsTable } from './tables/floor-prompt-snapshots.table';

export type FloorPromptSnapshotRow = Selectable<FloorPromptSnapshotsTable>;

/**
 * The prompt snapshots of committed floors (db/migrations/20261122100000_floor_prompt_snapshots.ts).
 * Callers have checked access to the floor's session.
 */
export const floorPromptSnapshotsRepository = {
  /** Writes (or replaces, for a retry that commits a new page) the snapshot of a floor. */
  async upsert(db: Executor, row: Insertable<FloorPromptSnapshotsTable>): Promise<void> {
    await db
      .insertInto('floor_prompt_snapshots')
      .values(row)
      .onConflict((oc) =>
        oc.column('floor_id').doUpdateSet({
          snapshot: (eb) => eb.ref('excluded.snapshot'),
          trace: (eb) => eb.ref('excluded.trace'),
          created_at: (eb) => eb.ref('excluded.created_at'),
        }),
      )
      .execute();
  },

  async findOfFloor(db: Executor, floorId: string): Promise<FloorPromptSnapshotRow | undefined> {
    return db
      .selectFrom('floor_prompt_snapshots')
      .selectAll()
      .where('floor_id', '=', floorId)
      .executeTakeFirst();
  },

  async findOfFloors(db: Executor, sessionId: string, floorIds: string[]): Promise<FloorPromptSnapshotRow[]> {
    if (floorIds.length === 0) return [];
    return db
      .selectFrom('floor_prompt_snapshots')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('floor_id', 'in', floorIds)
      .execute();
  },
};
