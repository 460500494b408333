import { DomainError } from '@hearth/domain';

/** A committed floor without a stored prompt (the greeting, imported floors, floors older than snapshots). */
export const promptSnapshotNotFound = (floorId: string) =>
  new DomainError('prompt_snapshot_not_found', 404, `Floor ${floorId} has no stored prompt snapshot`, {
    floor_id: floorId,
  });
