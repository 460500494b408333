import { CompiledQuery } from 'kysely';
import { type AppendedMessageInput, MESSAGE_INSERTS, type MessageRow } from './conversation.repository';
import type { Executor } from './database';
import type { FloorRow, PageRow } from './floors.repository';
import type { NewOperationLog } from './operation-logs.repository';
import { preparedStatement } from './prepared-statements';
import type { NewProjectEvent } from './project-events.repository';
import {
  OPERATION_LOG_COLUMNS,
  PROJECT_EVENT_COLUMNS,
  columnNames,
  columnsExcept,
  parameterSlots,
} from './typed-columns';

/** The operation log's columns, each a typed parameter of TURN_COMMIT (from $LOG_FIRST on). */
const LOG_COLUMNS = OPERATION_LOG_COLUMNS;

/** The Project event's columns but `sequence` (the counter's) and `payload` (completed in SQL). */
const EVENT_COLUMNS = columnsExcept(PROJECT_EVENT_COLUMNS, 'payload');

/** $1..$21: see `commitRespondTurn`. */
const FIXED_PARAMETERS = 21;
const LOG_FIRST = FIXED_PARAMETERS + 1;
const EVENT_FIRST = LOG_FIRST + LOG_COLUMNS.length;
/** The event's `project_id` parameter, which the counter bump reads too. */
const EVENT_PROJECT_SLOT = EVENT_FIRST + EVENT_COLUMNS.findIndex(([column]) => column === 'project_id');

/**
 * The commit of a respond turn as ONE statement, hence one transaction and one round trip
 * (docs/decisions.md "Turn latency"). `lock_timeout` is set for this transaction first (503
 * `commit_busy` when a lock is held longer); then the gate: the branch's row lock with its head still
 * on the turn's floor, and the run's row lock while it is `running` (both locks re-read the newest
 * row version). Only then, each depending on the floor's conditional `generating` → `committed`
 * update: the output page (the floor's next page number, version 1 of its kind) and its messages,
 * the prompt snapshot, the floor's local variable view, the operation log, the Project counter bump
 * and the `floor.committed` event (its payload gets the page's version), and the run's conditional
 * `running` → `completed`. The run row is locked before the floor is updated and nothing else ends
 * it while it is locked, so the run update cannot miss once the floor update happened: either all
 * of it is written or nothing (the caller then takes the step-by-step transaction, which names the
 * error). The history-edit triggers see a floor this transaction wrote, as in the step-by-step path.
 */
const TURN_COMMIT = preparedStatement(`
WITH settings AS (
  SELECT set_config('lock_timeout', $1::text, true) AS lock_timeout
),
branch AS (
  SELECT b.id FROM branches b, settings
  WHERE b.id = $2::text AND b.head_floor_id = $3::text
  FOR UPDATE OF b
),
running AS (
  SELECT r.id FROM generation_runs r, settings
  WHERE r.id = $4::text AND r.status = 'running'
  FOR UPDATE OF r
),
floor AS (
  UPDATE floors f SET state = 'committed', token_in = $5::integer, token_out = $6::integer,
    reasoning_text = $7::text, state_snapshot = $8::jsonb, updated_at = $9::bigint
  FROM branch, running
  WHERE f.id = $3::text AND f.state = 'generating'
  RETURNING f.*
),
numbers AS (
  SELECT coalesce(max(page_no) + 1, 0) AS page_no,
    coalesce(max(version) FILTER (WHERE page_kind = 'output'), 0) + 1 AS version
  FROM pages WHERE floor_id = $3::text
),
page AS (
  INSERT INTO pages (id, account_id, session_id, floor_id, page_no, page_kind, is_active, version, checksum,
    created_at, updated_at)
  SELECT $10::text, f.account_id, f.session_id, f.id, n.page_no, 'output', true, n.version, $11::text,
    $9::bigint, $9::bigint
  FROM floor f, numbers n
  RETURNING *
),
${MESSAGE_INSERTS({ account: '$13', session: '$14', now: '$9', messages: '$12' })},
prompt_snapshot AS (
  INSERT INTO floor_prompt_snapshots (floor_id, session_id, account_id, snapshot, trace, created_at)
  SELECT f.id, f.session_id, f.account_id, $15::jsonb, $16::jsonb, $9::bigint FROM floor f
  ON CONFLICT (floor_id) DO UPDATE SET snapshot = excluded.snapshot, trace = excluded.trace,
    created_at = excluded.created_at
),
variable_snapshot AS (
  INSERT INTO floor_variable_snapshots (floor_id, account_id, session_id, branch_id, local_view, created_at,
    updated_at)
  SELECT f.id, f.account_id, f.session_id, f.branch_id, $17::jsonb, $9::bigint, $9::bigint FROM floor f
  ON CONFLICT (floor_id) DO UPDATE SET local_view = excluded.local_view, updated_at = excluded.updated_at
),
log AS (
  INSERT INTO operation_logs (${columnNames(LOG_COLUMNS)})
  SELECT ${parameterSlots(LOG_COLUMNS, LOG_FIRST)} FROM floor
),
counter AS (
  INSERT INTO project_event_counters AS c (project_id, last_sequence)
  SELECT $${EVENT_PROJECT_SLOT}::text, 1 FROM floor
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
  RETURNING last_sequence
),
event AS (
  INSERT INTO project_events (sequence, payload, ${columnNames(EVENT_COLUMNS)})
  SELECT counter.last_sequence, $18::jsonb || jsonb_build_object('page_version', page.version),
    ${parameterSlots(EVENT_COLUMNS, EVENT_FIRST)}
  FROM counter, page
  RETURNING sequence
),
ended AS (
  UPDATE generation_runs r SET status = 'completed', phase = 'completed', phase_seq = $19::integer,
    pending_text = $20::text, pending_reasoning = $7::text, last_event_seq = $21::integer,
    updated_at = $9::bigint, completed_at = $9::bigint
  FROM floor
  WHERE r.id = $4::text AND r.status = 'running'
  RETURNING r.id
)
SELECT
  (SELECT row_to_json(f) FROM floor f) AS floor,
  (SELECT row_to_json(x) FROM page x) AS page,
  (SELECT coalesce(json_agg(m ORDER BY m.seq), '[]'::json) FROM msgs m) AS messages,
  (SELECT sequence FROM event) AS event_sequence,
  (SELECT count(*) FROM ended)::integer AS ended
`);

export interface CommitRespondTurnInput {
  lockTimeoutMs: number;
  branchId: string;
  floorId: string;
  runId: string;
  accountId: string;
  sessionId: string;
  floor: { token_in: number; token_out: number; reasoning_text: string | null; state_snapshot: string };
  /** The output page's id, checksum and messages (message-writes.ts `messageRowsOf`). */
  page: { id: string; checksum: string; messages: AppendedMessageInput[] };
  promptSnapshot: { snapshot: string; trace: string };
  /** The floor's local variable view after the turn (JSON). */
  localView: string;
  log: NewOperationLog;
  /** The `floor.committed` event; its payload gets `page_version` from the page written. */
  event: NewProjectEvent;
  run: { phase_seq: number; pending_text: string; last_event_seq: number };
  now: number;
}

export interface CommittedRespondTurn {
  floor: FloorRow;
  page: PageRow;
  messages: MessageRow[];
  eventSequence: number;
}

/**
 * The commit of a respond turn in one statement (TURN_COMMIT); `undefined` when the gate did not pass
 * (the head moved, the run or the floor was ended meanwhile): nothing was written.
 */
export const turnCommitRepository = {
  async commitRespondTurn(
    db: Executor,
    input: CommitRespondTurnInput,
  ): Promise<CommittedRespondTurn | undefined> {
    const log = input.log as unknown as Record<string, unknown>;
    const event = input.event as unknown as Record<string, unknown>;
    const result = await db.executeQuery<{
      floor: FloorRow | null;
      page: PageRow | null;
      messages: MessageRow[];
      event_sequence: string | number | null;
      ended: number;
    }>(
      CompiledQuery.raw(TURN_COMMIT, [
        String(Math.max(1, Math.floor(input.lockTimeoutMs))),
        input.branchId,
        input.floorId,
        input.runId,
        input.floor.token_in,
        input.floor.token_out,
        input.floor.reasoning_text,
        input.floor.state_snapshot,
        input.now,
        input.page.id,
        input.page.checksum,
        JSON.stringify(input.page.messages),
        input.accountId,
        input.sessionId,
        input.promptSnapshot.snapshot,
        input.promptSnapshot.trace,
        input.localView,
        input.event.payload,
        input.run.phase_seq,
        input.run.pending_text,
        input.run.last_event_seq,
        ...LOG_COLUMNS.map(([column]) => log[column] ?? null),
        ...EVENT_COLUMNS.map(([column]) => event[column] ?? null),
      ]),
    );
    const row = result.rows[0];
    if (!row?.floor || !row.page || row.event_sequence === null || row.ended !== 1) {
      // The gate holds both rows, so a written floor always comes with an ended run.
      if (row?.floor)
        throw new Error(`turn commit of ${input.floorId}: the floor was written without its run`);
      return undefined;
    }
    return {
      floor: row.floor,
      page: row.page,
      messages: row.messages,
      eventSequence: Number(row.event_sequence),
    };
  },
};
