import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, type BranchRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSession } from '../sessions/session-access';
import { requireBranchOfSession } from './conversation-access';
import { lineageFloors, loadFloorsWithPages, transcriptWindow, type FloorWithPages } from './floor-reads';
import { ensureMainBranch } from './session-conversation';

export const TRANSCRIPT_DEFAULT_LIMIT = 100;
export const TRANSCRIPT_MAX_LIMIT = 500;

export interface ListFloorsInput {
  branch_id?: string;
  after_floor_no?: number;
  before_floor_no?: number;
  limit?: number;
}

export interface FloorPage {
  branch: BranchRow;
  floors: FloorWithPages[];
  meta: { limit: number; has_more: boolean };
}

/**
 * `GET /sessions/:id/floors` (CONTRACT.md "Sessions"): the transcript of a branch (default `main`), its
 * lineage in ascending floor_no, one window of floor numbers read by index ranges (never the whole
 * chat). Any member of the session's Project; others 404 `not_found`; an unknown branch or a branch of
 * another session 404 `branch_not_found`.
 */
@Injectable()
export class ListFloorsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, input: ListFloorsInput): Promise<FloorPage> {
    const { session } = await requireSession(this.access, this.db, actor, sessionId, 'project.read');
    const branch = input.branch_id
      ? await requireBranchOfSession(this.db, session.id, input.branch_id)
      : await ensureMainBranch(this.db, session);
    const limit = input.limit ?? TRANSCRIPT_DEFAULT_LIMIT;
    const head = branch.head_floor_id
      ? await conversationRepository.findFloor(this.db, branch.head_floor_id)
      : undefined;
    const window = transcriptWindow(head?.floor_no ?? null, { ...input, limit });
    const floors = head ? await lineageFloors(this.db, head, window.from, window.to) : [];
    return {
      branch,
      floors: await loadFloorsWithPages(this.db, floors),
      meta: { limit, has_more: window.has_more },
    };
  }
}
