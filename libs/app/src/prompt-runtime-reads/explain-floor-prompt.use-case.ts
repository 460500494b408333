import { Inject, Injectable } from '@nestjs/common';
import type { PromptEngineResult } from '@hearth/domain/prompt/engine';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db, FloorRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireFloor } from '../conversation/conversation-access';
import { floorNotCommitted } from '../conversation/conversation-errors';
import { promptSnapshotView, type PromptSnapshotView } from '../turns/dry-run-result';
import { readFloorPromptSnapshot, type StoredFloorPrompt } from './floor-prompt-snapshot';
import { promptSnapshotNotFound } from './prompt-runtime-reads-errors';

/** `{data}` of `GET /floors/:id/prompt-runtime/explain`: the stored prompt of a committed floor. */
export interface FloorPromptExplanation {
  floor_id: string;
  floor_no: number;
  branch_id: string;
  session_id: string;
  /** When the snapshot was stored (the commit). */
  created_at: number;
  messages: PromptEngineResult['prompt_snapshot']['messages'];
  token_estimate: number;
  available_for_reply: number;
  prompt_snapshot: PromptSnapshotView;
  assembly: PromptEngineResult['assembly'];
  runtime_trace: PromptEngineResult['runtime_trace'];
  warnings: PromptEngineResult['warnings'];
}

export function toFloorPromptExplanation(floor: FloorRow, stored: StoredFloorPrompt): FloorPromptExplanation {
  return {
    floor_id: floor.id,
    floor_no: floor.floor_no,
    branch_id: floor.branch_id,
    session_id: floor.session_id,
    created_at: stored.row.created_at,
    messages: stored.snapshot.messages,
    token_estimate: stored.trace.token_estimate,
    available_for_reply: stored.trace.available_for_reply,
    prompt_snapshot: promptSnapshotView(stored.snapshot),
    assembly: stored.trace.assembly,
    runtime_trace: stored.trace.runtime_trace,
    warnings: stored.trace.warnings ?? [],
  };
}

/**
 * The stored prompt of a committed floor of a session the caller may read, never recomputed: 404
 * `floor_not_found` (missing, or not readable), 409 `floor_not_committed`, 404
 * `prompt_snapshot_not_found` (a floor no turn generated: greeting, imported, older floors).
 */
export async function requireFloorPrompt(db: Db, floor: FloorRow): Promise<StoredFloorPrompt> {
  if (floor.state !== 'committed') throw floorNotCommitted(floor.id, floor.state);
  const stored = await readFloorPromptSnapshot(db, floor.id);
  if (!stored) throw promptSnapshotNotFound(floor.id);
  return stored;
}

/** `GET /floors/:id/prompt-runtime/explain`: any member of the session's Project. */
@Injectable()
export class ExplainFloorPromptUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, floorId: string): Promise<FloorPromptExplanation> {
    const { floor } = await requireFloor(this.access, this.db, actor, floorId, 'project.read');
    return toFloorPromptExplanation(floor, await requireFloorPrompt(this.db, floor));
  }
}
