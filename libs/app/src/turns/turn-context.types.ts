import type { GenerationType } from '@hearth/domain/prompt/assembly/chat-completion';
import type { PromptEngineInput } from '@hearth/domain/prompt/engine';
import type { LorebookTimedState } from '@hearth/domain/prompt/lorebook';
import type { ProjectRole } from '@hearth/permissions';
import type { BranchRow, FloorRow, GenerationRunRow, ProjectRow, SessionRow } from '@hearth/persistence';

/** A request-level injection item as sent (spec 2 `prompt_runtime_injections[]`), validated by the loader. */
export interface RequestInjectionInput {
  source_kind?: unknown;
  title?: unknown;
  content?: unknown;
  placement?: unknown;
  placement_params?: unknown;
  order?: unknown;
  scope?: unknown;
  [key: string]: unknown;
}

/** What a turn asks for (respond, dry-run, regenerate, retry …). */
export interface TurnContextRequest {
  sessionId: string;
  /** Default: the session's `main` branch. */
  branchId?: string | null;
  /** Start from this floor instead of the branch head (must be in the branch's lineage). */
  sourceFloorId?: string | null;
  /** `normal`, `continue`, `impersonate`, `swipe`, `regenerate`, `quiet`. */
  intent: GenerationType;
  /** The user's new message (null for continue, regenerate and swipe). */
  userInput: string | null;
  /** Spec 2 `prompt_runtime_injections` (at most 32; `source_kind` `client_injection`, `scope` `request`). */
  requestInjections?: readonly RequestInjectionInput[] | null;
  debug?: { include_worldbook_matches?: boolean } | null;
  generationParams?: { max_output_tokens?: number | null; max_context_tokens?: number | null } | null;
  /** The `request_override` policy layer (dry-run's `budget` and `source_selection`). */
  policyOverride?: Record<string, unknown> | null;
  /** `read` (dry-run, preview, inspect: `project.read`) or `write` (respond …: `project.session.write`). */
  access?: 'read' | 'write';
  /** Distinguishes retries (part of the seed); absent for a dry-run and a first attempt. */
  attemptId?: string | null;
  /** The turn's instant (ms); default `Date.now()`. */
  now?: number;
  /** `temporary`: a temporary conversation's session (its own routes only); default `standard`. */
  sessionKind?: 'standard' | 'temporary';
  /**
   * The code of a missing (or not readable) session: `not_found` for the chat routes (spec 2 "Errors"),
   * `session_not_found` for the `/sessions/:id/prompt-runtime/*` reads (the code of that route family).
   */
  sessionNotFoundCode?: 'not_found' | 'session_not_found';
}

export interface TurnModel {
  provider: string;
  model_id: string;
  base_url: string | null;
}

export interface TurnContextWarning {
  code: string;
  message: string;
  [key: string]: unknown;
}

export interface TurnContext {
  session: SessionRow;
  project: ProjectRow;
  role: ProjectRole;
  branch: BranchRow;
  /** The floor the new turn continues from (the branch head or `source_floor_id`); null for an empty branch. */
  parentFloor: FloorRow | null;
  /** The floor number the new turn's floor gets (parent's + 1, 0 for an empty branch). */
  nextFloorNo: number;
  engineInput: PromptEngineInput;
  /** The model of the turn (from configuration until profile bindings are wired in); null when none. */
  model: TurnModel | null;
  /** Loading problems that did not stop the turn (a bound worldbook that is gone, …). */
  warnings: TurnContextWarning[];
  /** The branch's `running` generation run when the context was read (another turn, or a stale one). */
  runningRun: GenerationRunRow | null;
  /** The session's history revision the history was read under (null: not read through the cache). */
  historyRev: string | null;
}

/**
 * What a committed floor keeps in `floors.state_snapshot` for the turns after it (written by the turn
 * that commits it): the lorebook timed-effect state after that turn and, when known, its variables.
 */
export interface FloorStateSnapshot {
  timed_state?: LorebookTimedState | null;
  variables?: { local: Record<string, unknown>; global: Record<string, unknown> } | null;
}
