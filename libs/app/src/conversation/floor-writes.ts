import { ID_PREFIX, newId } from '@hearth/domain';
import {
  conversationRepository,
  isUniqueViolation,
  type AppendFloorAfterHeadInput,
  type BranchRow,
  type Executor,
  type GenerationRunRow,
  type FloorRow,
  type SessionRow,
  type Tx,
} from '@hearth/persistence';
import {
  branchNotFound,
  commitConflict,
  floorNotCommitted,
  floorNotFound,
  generationConflict,
  generationTargetStale,
} from './conversation-errors';
import {
  messageRowsOf,
  pageChecksum,
  writePage,
  type MessageInput,
  type PageWithMessages,
} from './message-writes';

/** The prefix of floor line ids (db/migrations/20261122060000_conversation_model.ts). */
export const FLOOR_LINE_PREFIX = 'fline';

export interface AppendUserFloorInput {
  session: Pick<SessionRow, 'id' | 'account_id'>;
  branchId: string;
  /** The input page's messages (the user's message; hidden or narrator messages are allowed too). */
  messages: MessageInput[];
  /**
   * When given, the branch head the caller assembled its prompt against: a different head answers 409
   * `generation_target_stale` (`null` = the branch had no floor).
   */
  expectedHeadFloorId?: string | null;
  /** Default `generating`; `committed` appends a floor with no generation (an import, a plain message). */
  state?: 'generating' | 'committed';
  now?: number;
}

export interface AppendedFloor {
  floor: FloorRow;
  input: PageWithMessages;
  branch: BranchRow;
}

/**
 * Appends a floor after the branch head (floor_no = head + 1, floor 0 on an empty branch) with its
 * active `input` page, and moves the head to it; by default the floor is `generating`. The branch row
 * is locked for the append. One generation per branch: a branch that already has a generating floor
 * answers 409 `generation_conflict` (the partial unique index is the backstop for any race). The head
 * must be committed.
 */
export async function appendUserFloor(tx: Tx, input: AppendUserFloorInput): Promise<AppendedFloor> {
  const now = input.now ?? Date.now();
  const branch = await conversationRepository.lockBranchForTurn(tx, input.branchId);
  if (!branch || branch.session_id !== input.session.id) throw branchNotFound();
  if (input.expectedHeadFloorId !== undefined && input.expectedHeadFloorId !== branch.head_floor_id) {
    throw generationTargetStale(branch.id);
  }
  // The checks, the floor, its line, the input page, its messages and the head move: one statement
  // (docs/decisions.md "Turn latency"), with the errors of the step-by-step version.
  let appended;
  try {
    appended = await conversationRepository.appendFloorAfterHead(
      tx,
      appendedFloorInput(input, branch.id, branch.head_floor_id, now),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw generationConflict(branch.id);
    throw error;
  }
  const { floor, page, messages, branch: moved, parent } = appended;
  if (appended.generatingFloorId) throw generationConflict(branch.id);
  if (branch.head_floor_id && !parent) throw floorNotFound();
  if (parent && parent.state !== 'committed') throw floorNotCommitted(parent.id, parent.state);
  if (!floor || !page) throw generationConflict(branch.id);
  if (!moved) throw generationTargetStale(branch.id);
  return { floor, input: { page, messages }, branch: moved };
}

/** The rows of a new floor after `headFloorId`: ids, the input page's checksum, stored token counts. */
function appendedFloorInput(
  input: AppendUserFloorInput,
  branchId: string,
  headFloorId: string | null,
  now: number,
): AppendFloorAfterHeadInput {
  return {
    branchId,
    headFloorId,
    floor: {
      id: newId(ID_PREFIX.floor),
      account_id: input.session.account_id,
      session_id: input.session.id,
      state: input.state ?? 'generating',
    },
    newLineId: newId(FLOOR_LINE_PREFIX),
    page: { id: newId(ID_PREFIX.page), checksum: pageChecksum(input.messages) },
    messages: messageRowsOf(input.messages),
    now,
  };
}

/**
 * The start of a respond turn without a transaction (docs/decisions.md "Turn latency"): the
 * generating floor after `expectedHeadFloorId` with its input page, the head moved and the `running`
 * run, in one autocommit statement. `undefined` when a check did not pass (nothing written): the
 * caller then runs the locked path (`appendUserFloor` + the run insert), which names the error. A
 * concurrent generating floor or running run answers 409 `generation_conflict`.
 */
export async function startRespondTurn(
  db: Executor,
  input: AppendUserFloorInput & { expectedHeadFloorId: string | null },
  run: { id: string; run_type: string; detached: boolean; temp_id: string; lease_expires_at: number },
): Promise<(AppendedFloor & { run: GenerationRunRow }) | undefined> {
  const now = input.now ?? Date.now();
  let started;
  try {
    started = await conversationRepository.startTurn(db, {
      ...appendedFloorInput(input, input.branchId, input.expectedHeadFloorId, now),
      run,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw generationConflict(input.branchId);
    throw error;
  }
  if (!started) return undefined;
  return {
    floor: started.floor,
    input: { page: started.page, messages: started.messages },
    branch: started.branch,
    run: started.run,
  };
}

export interface CommitFloorInput {
  floorId: string;
  /** The output page's messages (the model's reply). */
  messages: MessageInput[];
  token_in: number;
  token_out: number;
  reasoning_text?: string | null;
  /** Variables and lorebook timed-effect state the turn saw. */
  state_snapshot?: unknown;
  now?: number;
}

/**
 * `generating` → `committed` as a conditional update, with the floor's first active `output` page. A
 * floor that is no longer generating (committed, cancelled or discarded meanwhile) answers 409
 * `commit_conflict` and writes nothing (the caller's transaction rolls back).
 */
export async function commitFloor(
  tx: Tx,
  input: CommitFloorInput,
): Promise<{ floor: FloorRow; output: PageWithMessages }> {
  const now = input.now ?? Date.now();
  const floor = await conversationRepository.commitFloor(
    tx,
    input.floorId,
    {
      token_in: input.token_in,
      token_out: input.token_out,
      reasoning_text: input.reasoning_text ?? null,
      ...(input.state_snapshot === undefined ? {} : { state_snapshot: JSON.stringify(input.state_snapshot) }),
    },
    now,
  );
  if (!floor) throw commitConflict(input.floorId);
  // A generating floor has only its input page: this is its first output page.
  const output = await writePage(tx, floor, 'output', input.messages, { active: true, now, first: true });
  return { floor, output };
}

/**
 * Removes a `generating` floor that failed or was cancelled (its pages and messages go with it) and
 * moves its branch head back to the floor's parent, so a failure leaves no half-written floor. Returns
 * false when the floor was not generating (already committed or gone).
 */
export async function discardGeneratingFloor(tx: Tx, floorId: string, now = Date.now()): Promise<boolean> {
  const floor = await conversationRepository.deleteGeneratingFloor(tx, floorId);
  if (!floor) return false;
  await conversationRepository.moveBranchHead(tx, floor.branch_id, floor.id, floor.parent_floor_id, now);
  if (floor.line_id) await conversationRepository.deleteLineIfEmpty(tx, floor.line_id);
  return true;
}

/**
 * Adds a page version to a committed floor (a retry or regenerate keeps the old pages): the next
 * version of `kind`, made the active page of its kind when `activate` (default true). The floor row is
 * locked, so concurrent additions and activations on one floor take turns.
 */
export async function addOutputPage(
  tx: Tx,
  input: {
    floorId: string;
    messages: MessageInput[];
    kind?: 'output' | 'greeting';
    activate?: boolean;
    now?: number;
  },
): Promise<{ floor: FloorRow; page: PageWithMessages }> {
  const now = input.now ?? Date.now();
  const floor = await conversationRepository.lockFloor(tx, input.floorId);
  if (!floor) throw floorNotFound();
  if (floor.state !== 'committed') throw floorNotCommitted(floor.id, floor.state);
  const page = await writePage(tx, floor, input.kind ?? 'output', input.messages, {
    active: input.activate ?? true,
    now,
  });
  await conversationRepository.touchFloor(tx, floor.id, now);
  return { floor, page };
}
