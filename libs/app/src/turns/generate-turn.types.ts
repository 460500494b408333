import type { PromptEngineInput, PromptEngineResult } from '@hearth/domain/prompt/engine';
import type { Actor, ProjectRole } from '@hearth/permissions';
import type { BranchRow, FloorRow, MessageRow, ProjectRow, SessionRow } from '@hearth/persistence';
import type { LlmParams, LlmTarget } from '@hearth/platform';
import type { RequestInjectionInput } from './turn-context.types';

/** The kinds of turn (the run's `run_type` and the operation log's action). */
export type TurnKind = 'respond' | 'regenerate' | 'retry_floor' | 'retry_step' | 'edit_and_regenerate';

export interface TurnDebugOptions {
  include_prompt_snapshot?: boolean;
  include_runtime_trace?: boolean;
  include_worldbook_matches?: boolean;
}

/** Generation parameters a chat route accepts (docs/decisions.md "Turns and runs"). */
export interface TurnGenerationParams {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  max_output_tokens?: number | null;
  max_context_tokens?: number | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  reasoning_effort?: string | null;
  stop?: string[] | null;
  timeout_ms?: number | null;
  stream?: boolean | null;
}

/** What every chat route shares. */
export interface TurnOptions {
  generation_params?: TurnGenerationParams | null;
  prompt_runtime_injections?: RequestInjectionInput[] | null;
  debug_options?: TurnDebugOptions | null;
  /** Keep generating when the client goes away; events are kept for `GET /runs/:id/events`. */
  detach?: boolean;
  /**
   * `temporary`: the turn runs on a temporary conversation's session (its own routes only; normal
   * routes never pass it, so they answer such a session 404). Default `standard`.
   */
  sessionKind?: 'standard' | 'temporary';
  /**
   * Spec 2 temporary conversations: text for this turn only, sent to the model as a system message
   * just before the user's input; never stored. Empty or blank = absent.
   */
  dynamic_context?: string | null;
  /**
   * Retries: ids of the floor's session state writes whose namespace asks for a confirmation before a
   * retry keeps them (docs/decisions.md "Client data and session state"). Respond ignores it.
   */
  confirmed_session_state_mutation_ids?: string[] | null;
}

export type TurnRequest = TurnOptions &
  (
    | {
        kind: 'respond';
        sessionId: string;
        message: string;
        branch_id?: string | null;
        source_floor_id?: string | null;
        /** Spec 2 session state writes, landed on the turn's floor when it commits. */
        session_state_writes?: Array<{
          namespace: string;
          slot: string;
          value?: unknown;
          delete?: true;
        }> | null;
      }
    | { kind: 'regenerate'; sessionId: string; branch_id?: string | null }
    | { kind: 'retry_floor'; floorId: string }
    | { kind: 'retry_step'; floorId: string; from_step_index: number }
    | { kind: 'edit_and_regenerate'; messageId: string; content: string }
  );

/** Spec 2 "Chat respond result", plus the ids a client needs to find what was written. */
export interface TurnResult {
  floor_id: string;
  floor_no: number;
  branch_id: string;
  page_id: string;
  run_id: string;
  generated_text: string;
  reasoning_text: string | null;
  summaries: string[];
  total_usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  final_state: 'committed';
  discarded_from_step_index?: number;
  irreversible_side_effects?: unknown[];
  /** The session state writes the turn landed (only when the request carried some). */
  session_state_mutations?: import('./session-state-writes').LandedStateWriteView[];
  prompt_snapshot?: unknown;
  runtime_trace?: unknown;
}

/** What a turn knows once it holds its branch's lock and before the model is called. */
export interface PreparedTurnState {
  kind: TurnKind;
  actor: Actor;
  session: SessionRow;
  project: ProjectRow;
  role: ProjectRole;
  branch: BranchRow;
  /** The generating floor (respond) or the committed floor that gets a new page. */
  floor: FloorRow;
  /** For edit-and-regenerate: the edited user message and its new content. */
  edit: { message: MessageRow; content: string } | null;
  engineInput: PromptEngineInput;
  prompt: PromptEngineResult;
  target: LlmTarget;
  params: LlmParams;
  stream: boolean;
  debug: TurnDebugOptions;
  fromStepIndex: number | null;
  /** Length of the user's input (operation logs record lengths only). */
  inputLength: number;
  /** The provider call when it was started before the lock (respond); else execute starts it. */
  upstream?: import('./generate-run').UpstreamCall | null;
  /**
   * Respond: the new floor's input page messages and the session's history revision the turn read,
   * so the commit can hand the committed floor to the history cache (docs/decisions.md "Turn history
   * cache").
   */
  history?: { revision: string | null; inputMessages: MessageRow[] };
  /** Retries: the floor's session state writes the client confirmed keeping (checked again at commit). */
  confirmedStateMutationIds?: string[] | null;
  /** Respond: the request's session state writes, checked, to land when the turn commits. */
  stateWrites?: import('./session-state-writes').TurnStateWrites | null;
}
