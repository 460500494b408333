import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, type Db, type FloorRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { floorNotFound } from '../conversation/conversation-errors';
import { requirePromptRuntimeTarget } from '../prompt-runtime/prompt-runtime-access';
import { requireFloorPrompt } from './explain-floor-prompt.use-case';
import { diffPromptSnapshots, type PromptDiff } from './prompt-diff';

export interface ComparedFloor {
  floor_id: string;
  floor_no: number;
  branch_id: string;
  created_at: number;
  prompt_digest: string;
  token_estimate: number;
  message_count: number;
}

/** `{data}` of `POST /sessions/:id/prompt-runtime/compare`. */
export interface FloorPromptComparison extends PromptDiff {
  session_id: string;
  base: ComparedFloor;
  target: ComparedFloor;
}

/**
 * `POST /sessions/:id/prompt-runtime/compare {base_floor_id, target_floor_id}`: the stored prompts of two
 * committed floors of the session, diffed (never recomputed). Any member of the session's Project (404
 * `session_not_found` otherwise); each floor must be of this session (404 `floor_not_found`), committed
 * (409 `floor_not_committed`) and have a snapshot (404 `prompt_snapshot_not_found`).
 */
@Injectable()
export class CompareFloorPromptsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    input: { base_floor_id: string; target_floor_id: string },
  ): Promise<FloorPromptComparison> {
    const { session } = await requirePromptRuntimeTarget(
      this.access,
      this.db,
      actor,
      sessionId,
      null,
      'read',
    );
    const floorOf = async (id: string): Promise<FloorRow> => {
      const floor = await conversationRepository.findFloor(this.db, id);
      if (!floor || floor.session_id !== session.id) throw floorNotFound();
      return floor;
    };
    const baseFloor = await floorOf(input.base_floor_id);
    const targetFloor = await floorOf(input.target_floor_id);
    const base = await requireFloorPrompt(this.db, baseFloor);
    const target = await requireFloorPrompt(this.db, targetFloor);
    const summary = (floor: FloorRow, stored: typeof base): ComparedFloor => ({
      floor_id: floor.id,
      floor_no: floor.floor_no,
      branch_id: floor.branch_id,
      created_at: stored.row.created_at,
      prompt_digest: stored.snapshot.prompt_digest,
      token_estimate: stored.snapshot.token_estimate,
      message_count: stored.snapshot.messages?.length ?? 0,
    });
    return {
      session_id: session.id,
      base: summary(baseFloor, base),
      target: summary(targetFloor, target),
      ...diffPromptSnapshots(base.snapshot, target.snapshot),
    };
  }
}
