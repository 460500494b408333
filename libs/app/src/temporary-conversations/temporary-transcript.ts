import { conversationRepository, type Executor } from '@hearth/persistence';
import { lineageFloors, loadFloorsWithPages, type FloorWithPages } from '../conversation/floor-reads';
import { MAIN_BRANCH } from '../conversation/session-conversation';

/**
 * A temporary conversation's transcript: every floor of its `main` branch in ascending floor_no with
 * all its pages and messages (the normal transcript read, without a window: a draft is short).
 */
export async function readTemporaryTranscript(db: Executor, sessionId: string): Promise<FloorWithPages[]> {
  const branch = await conversationRepository.findBranchByName(db, sessionId, MAIN_BRANCH);
  const head = branch?.head_floor_id
    ? await conversationRepository.findFloor(db, branch.head_floor_id)
    : null;
  if (!head) return [];
  return loadFloorsWithPages(db, await lineageFloors(db, head, 0, head.floor_no));
}
