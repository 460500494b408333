import type { PromptEngineResult } from '@hearth/domain/prompt/engine';
import {
  floorPromptSnapshotsRepository,
  type Executor,
  type FloorPromptSnapshotRow,
  type FloorRow,
  type Tx,
} from '@hearth/persistence';
import { visibleRuntimeTrace } from '../turns/dry-run-result';

/** What `floor_prompt_snapshots.trace` holds: everything explain shows besides the snapshot. */
export interface StoredPromptTrace {
  token_estimate: number;
  available_for_reply: number;
  assembly: PromptEngineResult['assembly'];
  /** Restricted injection items trimmed (title and source chain null), as every chat response shows it. */
  runtime_trace: PromptEngineResult['runtime_trace'];
  warnings: PromptEngineResult['warnings'];
}

/**
 * Stores the prompt a committed floor was generated from, in the commit's transaction (the generation
 * use case calls this with the engine result of the attempt it commits; a retry replaces the row, so
 * explain shows the prompt of the floor's latest committed attempt). Explain and compare read it
 * without recomputing.
 */
export async function storeFloorPromptSnapshot(
  tx: Tx,
  floor: Pick<FloorRow, 'id' | 'session_id' | 'account_id'>,
  result: PromptEngineResult,
  now: number = Date.now(),
): Promise<void> {
  await floorPromptSnapshotsRepository.upsert(tx, {
    floor_id: floor.id,
    session_id: floor.session_id,
    account_id: floor.account_id,
    ...promptSnapshotColumns(result),
    created_at: now,
  });
}

/** The stored snapshot and trace (JSON) of an engine result, as `storeFloorPromptSnapshot` writes them. */
export function promptSnapshotColumns(result: PromptEngineResult): { snapshot: string; trace: string } {
  const trace: StoredPromptTrace = {
    token_estimate: result.token_estimate,
    available_for_reply: result.available_for_reply,
    assembly: result.assembly,
    runtime_trace: visibleRuntimeTrace(result.runtime_trace),
    warnings: result.warnings,
  };
  return { snapshot: JSON.stringify(result.prompt_snapshot), trace: JSON.stringify(trace) };
}

export interface StoredFloorPrompt {
  row: FloorPromptSnapshotRow;
  snapshot: PromptEngineResult['prompt_snapshot'];
  trace: StoredPromptTrace;
}

export async function readFloorPromptSnapshot(
  db: Executor,
  floorId: string,
): Promise<StoredFloorPrompt | null> {
  const row = await floorPromptSnapshotsRepository.findOfFloor(db, floorId);
  if (!row) return null;
  return {
    row,
    snapshot: row.snapshot as unknown as PromptEngineResult['prompt_snapshot'],
    trace: row.trace as unknown as StoredPromptTrace,
  };
}
