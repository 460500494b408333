import { CompiledQuery } from 'kysely';
import type { BranchRow } from './conversation.repository';
import type { Executor } from './database';
import type { FloorRow } from './floors.repository';
import { preparedStatement } from './prepared-statements';
import {
  EXPIRED_INJECTIONS_FOR_TURN,
  promptRuntimeForTurn,
  type PromptInjectionRow,
  type PromptPolicyRow,
  type PromptRuntimeForTurn,
} from './prompt-runtime.repository';
import type { ProjectRow } from './projects.repository';
import type { SessionPromptSettingsRow } from './session-prompt-settings.repository';
import type { SessionRow } from './sessions.repository';
import type { GenerationRunRow } from './tables';
import type { VariableRow } from './variables.repository';
import type { LineRange } from './transcript.repository';

/**
 * A session with its Project, as JSON columns (row_to_json gives the values of `SELECT *`; bigints fit
 * a number), so the result shape never changes and the text runs as a prepared statement.
 */
const SESSION_WITH_PROJECT = preparedStatement(`
SELECT row_to_json(s) AS session, row_to_json(p) AS project
FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
WHERE s.id = $1::text AND s.kind = $2::text
`);

/**
 * A session's branch (by name or by id) with what a turn reads of it in one statement
 * (docs/decisions.md "Turn latency"): the head floor, the head's lineage as line ranges
 * (`transcriptRepository.lineageRanges` of the head), the session's history revision
 * (`session_history_edits`, docs/decisions.md "Turn history cache"), the session and branch prompt
 * policies, the persistent injections of both scopes as `promptRuntimeRepository.loadForTurn` reads
 * them (live ones in creation order, then at most `EXPIRED_INJECTIONS_FOR_TURN` expired ones), the
 * session's prompt settings row, the branch's running generation run, if any, and the durable
 * variables a turn on the head reads: the scopes of `contextTargets` for (session, branch, head
 * floor), in key order as `variablesRepository.listOfTargets` returns them (scope ids: `global`, the session id, `<session_id>:<branch_id>` as
 * `branchScopeId` writes it, the head floor id).
 */
/**
 * A session's history revision is `<largest edit id>:<sum of its latest HISTORY_REVISION_WINDOW edit
 * ids>` (docs/decisions.md "Turn history cache"): a new edit raises the largest id, and an edit that
 * commits after a later one of the same session enters the window, which changes the sum.
 */
const HISTORY_REVISION_WINDOW = 64;

const BRANCH_STATE = (by: 'name' | 'id') =>
  preparedStatement(`
SELECT row_to_json(b) AS branch, row_to_json(h) AS head,
  (WITH RECURSIVE chain (line_id, parent_line_id, fork_floor_no, lo, hi) AS (
     SELECT id, parent_line_id, fork_floor_no, start_floor_no, h.floor_no
     FROM floor_lines WHERE id = h.line_id
     UNION ALL
     SELECT l.id, l.parent_line_id, l.fork_floor_no, l.start_floor_no, c.fork_floor_no
     FROM floor_lines l JOIN chain c ON l.id = c.parent_line_id
   )
   SELECT json_agg(json_build_object('line_id', line_id, 'lo', lo, 'hi', hi)) FROM chain) AS head_ranges,
  (SELECT coalesce(max(w.edit_id), 0) || ':' || coalesce(sum(w.edit_id), 0)
   FROM (SELECT e.edit_id FROM session_history_edits e WHERE e.session_id = $1::text
     ORDER BY e.edit_id DESC LIMIT ${HISTORY_REVISION_WINDOW}) w) AS history_rev,
  (SELECT coalesce(json_agg(row_to_json(pp)), '[]'::json) FROM prompt_policies pp
    WHERE pp.session_id = $1::text AND (pp.branch_id IS NULL OR pp.branch_id = b.id)) AS policies,
  (SELECT coalesce(json_agg(row_to_json(pi)
      ORDER BY (pi.expires_at IS NOT NULL AND pi.expires_at <= $3::bigint), pi.created_at, pi.id), '[]'::json)
    FROM prompt_injections pi
    WHERE pi.session_id = $1::text AND (pi.branch_id IS NULL OR pi.branch_id = b.id)
      AND (pi.expires_at IS NULL OR pi.expires_at > $3::bigint OR pi.id IN (
        SELECT x.id FROM prompt_injections x
        WHERE x.session_id = $1::text AND (x.branch_id IS NULL OR x.branch_id = b.id)
          AND x.expires_at <= $3::bigint
        ORDER BY x.expires_at DESC, x.id DESC LIMIT ${EXPIRED_INJECTIONS_FOR_TURN}))) AS injections,
  (SELECT row_to_json(ps) FROM session_prompt_settings ps WHERE ps.session_id = $1::text) AS prompt_settings,
  (SELECT row_to_json(r) FROM generation_runs r WHERE r.branch_id = b.id AND r.status = 'running')
    AS running_run,
  (SELECT coalesce(json_agg(row_to_json(v) ORDER BY v.key), '[]'::json) FROM variables v
    WHERE v.account_id = b.account_id AND (
      (v.scope = 'floor' AND v.scope_id = b.head_floor_id)
      OR (v.scope = 'branch' AND v.scope_id = $1::text || ':' || b.id)
      OR (v.scope = 'chat' AND v.scope_id = $1::text)
      OR (v.scope = 'global' AND v.scope_id = 'global'))) AS head_variables
FROM branches b LEFT JOIN floors h ON h.id = b.head_floor_id
WHERE b.session_id = $1::text AND b.${by} = $2::text
`);
const BRANCH_STATE_BY_NAME = BRANCH_STATE('name');
const BRANCH_STATE_BY_ID = BRANCH_STATE('id');

export interface BranchState {
  branch: BranchRow;
  /** Null without a head, or when the head row is gone. */
  head: FloorRow | null;
  /** Empty when the head has no line. */
  headRanges: LineRange[];
  historyRev: string;
  /** The session and branch policies and injections, as `promptRuntimeRepository.loadForTurn`. */
  runtime: PromptRuntimeForTurn;
  promptSettings: SessionPromptSettingsRow | null;
  /** The branch's `running` run (at most one: a partial unique index). */
  runningRun: GenerationRunRow | null;
  /** The variables of the head's context (floor = head, branch, chat, global), key order. */
  headVariables: VariableRow[];
}

/** The reads that start a turn (docs/decisions.md "Turn latency"). */
export const turnStateRepository = {
  async sessionWithProject(
    db: Executor,
    sessionId: string,
    kind: SessionRow['kind'] = 'standard',
  ): Promise<{ session: SessionRow; project: ProjectRow | undefined } | undefined> {
    const result = await db.executeQuery<{ session: SessionRow; project: ProjectRow | null }>(
      CompiledQuery.raw(SESSION_WITH_PROJECT, [sessionId, kind]),
    );
    const row = result.rows[0];
    return row ? { session: row.session, project: row.project ?? undefined } : undefined;
  },

  /** The branch of a session by name or id, with the state a turn reads of it; undefined when absent. */
  async branchState(
    db: Executor,
    sessionId: string,
    by: { name: string } | { id: string },
    now: number,
  ): Promise<BranchState | undefined> {
    const [text, value] = 'name' in by ? [BRANCH_STATE_BY_NAME, by.name] : [BRANCH_STATE_BY_ID, by.id];
    const result = await db.executeQuery<{
      branch: BranchRow;
      head: FloorRow | null;
      head_ranges: LineRange[] | null;
      history_rev: string;
      policies: PromptPolicyRow[];
      injections: PromptInjectionRow[];
      prompt_settings: SessionPromptSettingsRow | null;
      running_run: GenerationRunRow | null;
      head_variables: VariableRow[];
    }>(CompiledQuery.raw(text, [sessionId, value, now]));
    const row = result.rows[0];
    if (!row) return undefined;
    return {
      branch: row.branch,
      head: row.head,
      headRanges: row.head_ranges ?? [],
      historyRev: row.history_rev,
      runtime: promptRuntimeForTurn(row.policies, row.injections, row.branch.id),
      promptSettings: row.prompt_settings,
      runningRun: row.running_run,
      headVariables: row.head_variables,
    };
  },
};
