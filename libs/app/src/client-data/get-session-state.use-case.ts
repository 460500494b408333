import { Inject, Injectable } from '@nestjs/common';
import { isNamespaceName, validationError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  clientDataRepository,
  conversationRepository,
  transcriptRepository,
  type Db,
  type FloorRow,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireBranchOfSession } from '../conversation/conversation-access';
import { floorNotFound } from '../conversation/conversation-errors';
import { ensureMainBranch } from '../conversation/session-conversation';
import { requireSession } from '../sessions/session-access';
import { requireClientDataEnabled } from './client-data-rules';

export interface GetSessionStateInput {
  branch_id?: string;
  floor_id?: string;
  /** Only this namespace (an unregistered name gives no items). */
  namespace?: string;
}

export interface SessionStateItem {
  namespace: string;
  slot: string;
  value: unknown;
  mutation_id: string;
  /** The floor whose turn wrote it, and its number. */
  floor_id: string;
  floor_no: number;
  /** When the write landed. */
  updated_at: number;
}

export interface SessionStateView {
  session_id: string;
  branch_id: string;
  floor_id: string | null;
  floor_no: number | null;
  items: SessionStateItem[];
}

/**
 * `GET /sessions/:id/state`: the session state a floor sees: for each (namespace, slot), the newest
 * write on the floor's lineage, slots whose newest write is a delete left out, by namespace then slot.
 * The floor is `floor_id` (404 `floor_not_found` when missing or of another session), else the head of
 * `branch_id` (404 `branch_not_found`), else the head of `main`; a branch without floors has no state.
 * Access is the transcript's (`GET /sessions/:id/floors`): any member of the session's Project, others
 * 404 `not_found`. Floors written before lines (test factories only) have no lineage ranges here.
 */
@Injectable()
export class GetSessionStateUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, input: GetSessionStateInput): Promise<SessionStateView> {
    requireClientDataEnabled(this.config);
    if (input.branch_id !== undefined && input.floor_id !== undefined)
      throw validationError('Give branch_id or floor_id, not both', {
        fields: [{ field: 'floor_id', problems: ['floor_id and branch_id are exclusive'] }],
      });
    const { session } = await requireSession(this.access, this.db, actor, sessionId, 'project.read');

    let branchId: string;
    let floor: FloorRow | undefined;
    if (input.floor_id !== undefined) {
      floor = await conversationRepository.findFloor(this.db, input.floor_id);
      if (!floor || floor.session_id !== session.id) throw floorNotFound();
      branchId = floor.branch_id;
    } else {
      const branch = input.branch_id
        ? await requireBranchOfSession(this.db, session.id, input.branch_id)
        : await ensureMainBranch(this.db, session);
      branchId = branch.id;
      floor = branch.head_floor_id
        ? await conversationRepository.findFloor(this.db, branch.head_floor_id)
        : undefined;
    }
    if (!floor)
      return { session_id: session.id, branch_id: branchId, floor_id: null, floor_no: null, items: [] };

    const view = {
      session_id: session.id,
      branch_id: branchId,
      floor_id: floor.id,
      floor_no: floor.floor_no,
    };
    let namespaceIds: string[] | null = null;
    if (input.namespace !== undefined) {
      // Namespaces are the session's account's (the writes were checked against them).
      const namespace = isNamespaceName(input.namespace)
        ? await clientDataRepository.findNamespace(this.db, session.account_id, input.namespace)
        : undefined;
      if (!namespace) return { ...view, items: [] };
      namespaceIds = [namespace.id];
    }
    const ranges = await transcriptRepository.lineageRanges(this.db, floor);
    const slots = await clientDataRepository.slotsOnLineage(this.db, session.id, ranges, namespaceIds);
    return {
      ...view,
      items: slots
        .filter((slot) => slot.present)
        .map((slot) => ({
          namespace: slot.namespace,
          slot: slot.slot,
          value: slot.value,
          mutation_id: slot.id,
          floor_id: slot.floor_id,
          floor_no: slot.floor_no,
          updated_at: slot.created_at,
        })),
    };
  }
}
