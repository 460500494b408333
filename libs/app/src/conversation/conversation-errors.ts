import { DomainError } from '@hearth/domain';

/** The error codes of the conversation routes (docs/decisions.md "Conversations"). */
export const floorNotFound = () => new DomainError('floor_not_found', 404, 'Floor not found');
export const pageNotFound = () => new DomainError('page_not_found', 404, 'Page not found');
export const branchNotFound = () => new DomainError('branch_not_found', 404, 'Branch not found');
export const branchNameConflict = (name: string) =>
  new DomainError('branch_name_conflict', 409, `The session already has a branch named "${name}"`, { name });
export const floorNotCommitted = (floorId: string, state: string) =>
  new DomainError('floor_not_committed', 409, `Floor ${floorId} is ${state}, not committed`, {
    floor_id: floorId,
    state,
  });
export const floorNotInBranch = (floorId: string, branchId: string) =>
  new DomainError(
    'floor_not_in_branch',
    409,
    `Floor ${floorId} is not in the history of branch ${branchId}`,
    {
      floor_id: floorId,
      branch_id: branchId,
    },
  );
export const generationConflict = (branchId: string) =>
  new DomainError('generation_conflict', 409, `Branch ${branchId} already has a generation in progress`, {
    branch_id: branchId,
  });
export const generationTargetStale = (branchId: string) =>
  new DomainError('generation_target_stale', 409, `The head of branch ${branchId} moved`, {
    branch_id: branchId,
  });
export const commitConflict = (floorId: string) =>
  new DomainError('commit_conflict', 409, `Floor ${floorId} is no longer generating`, { floor_id: floorId });
export const sessionArchived = (sessionId: string) =>
  new DomainError('session_archived', 409, `Session ${sessionId} is archived`);
