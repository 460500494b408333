import { Inject, Injectable } from '@nestjs/common';
import { conversationNotActive, DomainError, ID_PREFIX, newId, toStorableText } from '@hearth/domain';
import { macroContextOf, type PromptEngineInput } from '@hearth/domain/prompt/engine';
import { MacroSession } from '@hearth/domain/prompt/macros';
import { applyRegexScripts, REGEX_PLACEMENTS } from '@hearth/domain/prompt/regex';
import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import {
  conversationRepository,
  generationRunsRepository,
  inTransaction,
  temporaryConversationsRepository,
  turnCommitRepository,
  type Db,
  type FloorRow,
  type Tx,
  type UnitOfWork,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig, type LlmResult } from '@hearth/platform';
import { commitConflict, generationTargetStale } from '../conversation/conversation-errors';
import { commitFloor, discardGeneratingFloor } from '../conversation/floor-writes';
import {
  MESSAGE_TOKEN_ENCODING,
  messageRowsOf,
  pageChecksum,
  writePage,
  type MessageInput,
  type PageWithMessages,
} from '../conversation/message-writes';
import { ProjectEventWriter, type ProjectEventInput } from '../events/project-event-writer';
import { OperationLogWriter, type OperationLogInput } from '../operation-logs/operation-log-writer';
import {
  promptSnapshotColumns,
  storeFloorPromptSnapshot,
} from '../prompt-runtime-reads/floor-prompt-snapshot';
import { promoteStagedWrites, stageMutations, type StageableMutation } from '../variables/staged-writes';
import { snapshotLocalView } from '../variables/variable-views';
import { visibleRuntimeTrace } from './dry-run-result';
import { checkRetryStateReplay, landedWriteViews, landTurnStateWrites } from './session-state-writes';
import { rememberCommittedFloor } from './turn-context';
import type { PreparedTurnState, TurnResult } from './generate-turn.types';
import type { LiveRun, RunEvent } from './runs/live-run';

/**
 * The AI-output regex scripts in `stored` mode (what SillyTavern saves), applied to the model's reply
 * before it is stored; prompt-only and display-only scripts do not run here. As in ST's
 * `runRegexScript`, macros in a `findRegex` with `substituteRegex` and in each built replacement are
 * expanded, in the turn's macro context (names, card fields, variables as the turn read them; a
 * variable write there is not kept).
 */
export function storedOutputText(engineInput: PromptEngineInput, text: string): string {
  const scripts = engineInput.regex?.scripts ?? [];
  if (scripts.length === 0 || !text) return text;
  let session: MacroSession | null = null;
  const substitute = (t: string, escapeValue?: (value: string) => string) => {
    session ??= new MacroSession(macroContextOf(engineInput));
    return session.expand(t, { source: 'regex', escapeValue });
  };
  return applyRegexScripts(
    scripts.map((s: { script: Record<string, unknown>; scope?: unknown }) => ({
      script: s.script,
      scope: s.scope,
    })) as never,
    text,
    { placement: REGEX_PLACEMENTS.ai_output, mode: 'stored', substitute },
  ).text;
}

/**
 * The commit and failure transactions of a turn (docs/decisions.md "Turns and runs"). A commit writes,
 * in one transaction: the run's conditional `running` → `completed` (409 `commit_conflict` if it was
 * ended meanwhile), the floor's conditional `generating` → `committed` with its output page (respond)
 * or a new active output page version on the still-committed floor (retries; edit-and-regenerate also a
 * new input page version), token counts, reasoning, the state snapshot, the operation log, the
 * `floor.committed` event and, for detached runs, the remaining run events with `done`. A failure
 * removes the generating floor, ends the run `failed`/`cancelled` and logs it, in one transaction.
 */
@Injectable()
export class TurnCommitter {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async commit(state: PreparedTurnState, run: LiveRun, llm: LlmResult): Promise<TurnResult> {
    const now = Date.now();
    const text = storedOutputText(state.engineInput, llm.text);
    const reasoning = llm.reasoning_text ?? (run.row.pending_reasoning || null);
    const counter = tokenCounter(MESSAGE_TOKEN_ENCODING);
    const tokenIn = llm.usage?.prompt_tokens ?? state.prompt.token_estimate;
    const tokenOut = llm.usage?.completion_tokens ?? counter.count(llm.text);
    const stateSnapshot = {
      timed_state: state.prompt.timed_state_after,
      variables: state.engineInput.variables ?? null,
    };
    const output = [{ role: 'assistant' as const, content: text, source: 'model' }];
    const mutations = stagedMutationsOf(state);
    if (
      state.kind === 'respond' &&
      state.session.kind !== 'temporary' &&
      !run.detached &&
      !state.stateWrites &&
      !mutations.some((m) => m.scope === 'local')
    ) {
      const fast = await this.commitRespondInOneStatement(state, run, llm, {
        now,
        text,
        reasoning,
        tokenIn,
        tokenOut,
        stateSnapshot,
        output,
      });
      if (fast) return fast;
      // The gate did not pass: the step-by-step transaction below names the error.
    }
    let staged: RunEvent[] = [];
    let restore: () => void = () => undefined;
    const committed: { page: PageWithMessages | null } = { page: null };
    const previousRow = run.row;
    await run.quiesce();
    try {
      const result = await inTransaction(this.db, async (uow) => {
        const { tx } = uow;
        // A lock held longer than this fails the commit with 503 `commit_busy` (generate-run.ts).
        await generationRunsRepository.setLockTimeout(tx, this.config.turnCommitLockTimeoutMs);
        // A temporary conversation commits only while `active` (spec 2): a terminal move that came
        // after the turn started, even one too late to cancel it, makes the commit fail.
        if (state.session.kind === 'temporary') {
          const status = await temporaryConversationsRepository.statusForShare(tx, state.session.id);
          if (status !== 'active') throw conversationNotActive(state.session.id, status ?? 'gone');
        }
        let floor: FloorRow;
        let page: PageWithMessages;
        if (state.kind === 'respond') {
          const branch = await conversationRepository.lockBranch(tx, state.branch.id);
          if (branch?.head_floor_id !== state.floor.id) throw generationTargetStale(state.branch.id);
          const committed = await commitFloor(tx, {
            floorId: state.floor.id,
            messages: output,
            token_in: tokenIn,
            token_out: tokenOut,
            reasoning_text: reasoning,
            state_snapshot: stateSnapshot,
            now,
          });
          floor = committed.floor;
          page = committed.output;
        } else {
          const locked = await conversationRepository.lockFloor(tx, state.floor.id);
          if (!locked || locked.state !== 'committed') throw commitConflict(state.floor.id);
          if (locked.superseded_at !== null) throw generationTargetStale(state.branch.id);
          // The namespaces' replay policies as they are now (one may have changed during the generation).
          await checkRetryStateReplay(tx, locked.id, state.confirmedStateMutationIds);
          if (state.edit)
            await writePage(
              tx,
              locked,
              'input',
              [{ role: 'user', content: state.edit.content, source: 'user' }],
              {
                active: true,
                now,
              },
            );
          page = await writePage(tx, locked, 'output', output, { active: true, now });
          const updated = await generationRunsRepository.updateRetriedFloor(
            tx,
            locked.id,
            {
              token_in: tokenIn,
              token_out: tokenOut,
              reasoning_text: reasoning,
              state_snapshot: JSON.stringify(stateSnapshot),
            },
            now,
          );
          if (!updated) throw generationTargetStale(state.branch.id);
          floor = updated;
        }
        committed.page = page;
        await storeFloorPromptSnapshot(tx, floor, state.prompt, now);
        await this.commitVariables(tx, state, run, floor, page, now);
        const landed = state.stateWrites
          ? await landTurnStateWrites(tx, this.config, state.stateWrites, floor, {
              runId: run.id,
              clientId: state.actor.clientId,
              now,
            })
          : null;

        const result = this.resultOf(state, run, floor, page, text, reasoning, llm);
        if (landed) result.session_state_mutations = landedWriteViews(landed);
        const log = await this.logs.write(
          tx,
          state.actor,
          this.committedLog(state, run, floor.id, {
            page_id: page.page.id,
            output_length: text.length,
            reasoning_length: reasoning?.length ?? 0,
            prompt_token_count: tokenIn,
            completion_token_count: tokenOut,
            unsupported_params: llm.unsupported_params,
            ...(landed ? { session_state_write_count: landed.length } : {}),
          }),
        );
        await this.recordCommittedEvent(uow, state, run, floor, page, log.id, text.length);

        run.update({ status: 'completed', phase: 'completed', completed_at: now, pending_text: llm.text });
        staged = [run.stage('run', run.snapshot()), run.stage('done', result)];
        const ended = await generationRunsRepository.updateRunning(tx, run.id, {
          status: 'completed',
          phase: 'completed',
          phase_seq: run.row.phase_seq,
          pending_text: llm.text,
          pending_reasoning: reasoning,
          last_event_seq: run.lastSequence,
          updated_at: now,
          completed_at: now,
        });
        if (!ended) throw commitConflict(state.floor.id);
        restore = await run.storeRemaining(tx);
        return result;
      });
      run.deliver(staged);
      run.ended();
      // The floor as committed, for the next turn's history (docs/decisions.md "Turn history cache").
      if (state.kind === 'respond' && state.history && committed.page)
        rememberCommittedFloor(state.session.id, state.history.revision, state.floor, [
          ...state.history.inputMessages,
          ...committed.page.messages,
        ]);
      return result;
    } catch (error) {
      restore();
      run.unstage(staged);
      run.row = { ...previousRow, phase: run.row.phase };
      throw error;
    }
  }

  async recordFailure(state: PreparedTurnState, run: LiveRun, error: DomainError): Promise<void> {
    const now = Date.now();
    const cancelled = error.code === 'generation_cancelled';
    const status = cancelled ? 'cancelled' : 'failed';
    const errorBody = { code: error.code, message: error.message };
    let staged: RunEvent[] = [];
    let restore: () => void = () => undefined;
    await run.quiesce();
    try {
      await inTransaction(this.db, async ({ tx }) => {
        if (state.kind === 'respond') await discardGeneratingFloor(tx, state.floor.id, now);
        await this.logs.write(tx, state.actor, {
          action: state.kind,
          status,
          account_id: state.session.account_id,
          workspace_id: state.session.workspace_id,
          project_id: state.session.project_id,
          session_id: state.session.id,
          branch_id: state.branch.id,
          floor_id: state.floor.id,
          run_id: run.id,
          target_type: 'floor',
          target_id: state.floor.id,
          metadata: this.logMetadata(state, run, {
            error_code: error.code,
            cancel_reason: run.cancelReason,
            partial_output_length: run.row.pending_text.length,
          }),
        });
        run.update({ status, phase: status, error: errorBody, completed_at: now });
        staged = [run.stage('run', run.snapshot()), run.stage('error', errorBody)];
        await generationRunsRepository.updateRunning(tx, run.id, {
          status,
          phase: status,
          phase_seq: run.row.phase_seq,
          error: JSON.stringify(errorBody),
          pending_text: toStorableText(run.row.pending_text),
          pending_reasoning:
            run.row.pending_reasoning === null ? null : toStorableText(run.row.pending_reasoning),
          last_event_seq: run.lastSequence,
          updated_at: now,
          completed_at: now,
        });
        restore = await run.storeRemaining(tx);
      });
    } catch (recordError) {
      restore();
      run.unstage(staged);
      // The client still learns how the turn ended, even if the record could not be written.
      run.deliver([run.stage('error', errorBody)]);
      throw recordError;
    }
    run.deliver(staged);
    run.ended();
  }

  /**
   * The turn's macro variable writes (local view) are staged on the output page and promoted to the
   * floor (H15's ledger), and the floor's local view after the turn is snapshotted for branches.
   */
  private async commitVariables(
    tx: Tx,
    state: PreparedTurnState,
    run: LiveRun,
    floor: FloorRow,
    page: PageWithMessages,
    now: number,
  ): Promise<void> {
    const mutations = stagedMutationsOf(state);
    const local: Record<string, unknown> = { ...(state.engineInput.variables?.local ?? {}) };
    const localWrites = mutations.filter((m) => m.scope === 'local');
    if (localWrites.length > 0) {
      await stageMutations(
        tx,
        page.page,
        localWrites,
        { runId: run.id, generationAttemptNo: run.row.attempt_no },
        { now },
      );
      await promoteStagedWrites(tx, page.page, floor, now);
      for (const m of localWrites) {
        if (m.deleted) delete local[m.key];
        else local[m.key] = m.after;
      }
    }
    await snapshotLocalView(tx, floor, local, now);
  }

  private resultOf(
    state: PreparedTurnState,
    run: LiveRun,
    floor: FloorRow,
    page: PageWithMessages,
    text: string,
    reasoning: string | null,
    llm: LlmResult,
  ): TurnResult {
    const promptTokens = llm.usage?.prompt_tokens ?? floor.token_in;
    const completionTokens = llm.usage?.completion_tokens ?? floor.token_out;
    const result: TurnResult = {
      floor_id: floor.id,
      floor_no: floor.floor_no,
      branch_id: state.branch.id,
      page_id: page.page.id,
      run_id: run.id,
      generated_text: text,
      reasoning_text: reasoning,
      summaries: [],
      total_usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: llm.usage?.total_tokens ?? promptTokens + completionTokens,
      },
      final_state: 'committed',
    };
    if (state.kind === 'retry_step') {
      result.discarded_from_step_index = state.fromStepIndex ?? 1;
      result.irreversible_side_effects = [];
    }
    if (state.debug.include_prompt_snapshot) result.prompt_snapshot = state.prompt.prompt_snapshot;
    if (state.debug.include_runtime_trace) {
      result.runtime_trace = {
        ...visibleRuntimeTrace(state.prompt.runtime_trace),
        provider: {
          provider: state.target.provider,
          model: state.target.model,
          sent_params: llm.sent_params,
          unsupported_params: llm.unsupported_params,
          finish_reason: llm.finish_reason,
        },
        ...(state.debug.include_worldbook_matches
          ? { worldbook_matches: state.prompt.assembly.worldbook_matches ?? [] }
          : {}),
      };
    }
    return result;
  }

  private logMetadata(state: PreparedTurnState, run: LiveRun, extra: Record<string, unknown>) {
    return {
      run_type: state.kind,
      detached: run.detached,
      provider: state.target.provider,
      model: state.target.model,
      input_length: state.inputLength,
      edited_message_id: state.edit?.message.id ?? null,
      ...extra,
    };
  }

  private async recordCommittedEvent(
    uow: UnitOfWork,
    state: PreparedTurnState,
    run: LiveRun,
    floor: FloorRow,
    page: PageWithMessages,
    operationLogId: string,
    outputLength: number,
  ): Promise<void> {
    const event = this.committedEvent(state, run, floor, page.page.id, page.messages[0]?.id ?? null, {
      operationLogId,
      outputLength,
    });
    await this.events.record(uow, {
      ...event,
      payload: { ...event.payload, page_version: page.page.version },
    });
  }

  /** The `floor.committed` event but its payload's `page_version`. */
  private committedEvent(
    state: PreparedTurnState,
    run: LiveRun,
    floor: Pick<FloorRow, 'id' | 'floor_no' | 'token_in' | 'token_out'>,
    pageId: string,
    messageId: string | null,
    written: { operationLogId: string; outputLength: number },
  ): ProjectEventInput {
    return {
      project: { id: state.project.id, workspace_id: state.project.workspace_id },
      type: 'floor.committed',
      // A temporary conversation's turns are not the Project's narrative: observers never see them,
      // and agents never trigger on them (docs/decisions.md "Temporary conversations").
      visibility: state.session.kind === 'temporary' ? 'internal' : 'project',
      actor: state.actor,
      session_id: state.session.id,
      branch_id: state.branch.id,
      floor_id: floor.id,
      page_id: pageId,
      message_id: messageId,
      operation_log_id: written.operationLogId,
      correlation_id: run.id,
      payload: {
        floor_no: floor.floor_no,
        run_id: run.id,
        run_type: state.kind,
        output_length: written.outputLength,
        token_in: floor.token_in,
        token_out: floor.token_out,
      },
    };
  }

  /** The operation log of a committed turn. */
  private committedLog(
    state: PreparedTurnState,
    run: LiveRun,
    floorId: string,
    metadata: {
      page_id: string;
      output_length: number;
      reasoning_length: number;
      prompt_token_count: number;
      completion_token_count: number;
      unsupported_params: LlmResult['unsupported_params'];
      session_state_write_count?: number;
    },
  ): OperationLogInput {
    return {
      action: state.kind,
      account_id: state.session.account_id,
      workspace_id: state.session.workspace_id,
      project_id: state.session.project_id,
      session_id: state.session.id,
      branch_id: state.branch.id,
      floor_id: floorId,
      run_id: run.id,
      target_type: 'floor',
      target_id: floorId,
      metadata: this.logMetadata(state, run, metadata),
    };
  }

  /**
   * The commit of a respond turn whose run is not detached and whose macros wrote no local variable,
   * as one statement (turnCommitRepository.commitRespondTurn: the same rows as the transaction of
   * `commit`, in one round trip; docs/decisions.md "Turn latency"). `undefined` when its gate did not
   * pass (nothing written, the run as it was): the caller then runs the transaction, which names the
   * error. The `run` and `done` events are numbered before the statement (it stores the last sequence)
   * and sent once it committed.
   */
  private async commitRespondInOneStatement(
    state: PreparedTurnState,
    run: LiveRun,
    llm: LlmResult,
    turn: {
      now: number;
      text: string;
      reasoning: string | null;
      tokenIn: number;
      tokenOut: number;
      stateSnapshot: unknown;
      output: MessageInput[];
    },
  ): Promise<TurnResult | undefined> {
    const { now, text, reasoning } = turn;
    const pageId = newId(ID_PREFIX.page);
    const messages = messageRowsOf(turn.output);
    const log = this.logs.row(
      state.actor,
      this.committedLog(state, run, state.floor.id, {
        page_id: pageId,
        output_length: text.length,
        reasoning_length: reasoning?.length ?? 0,
        prompt_token_count: turn.tokenIn,
        completion_token_count: turn.tokenOut,
        unsupported_params: llm.unsupported_params,
      }),
    );
    const event = this.events.row(
      this.committedEvent(
        state,
        run,
        { ...state.floor, token_in: turn.tokenIn, token_out: turn.tokenOut },
        pageId,
        messages[0]?.id ?? null,
        { operationLogId: log.id, outputLength: text.length },
      ),
    );
    const previousRow = run.row;
    // `run` and `done` follow: the run row stores the sequence of `done`.
    const lastEventSeq = run.lastSequence + 2;
    run.update({ status: 'completed', phase: 'completed', completed_at: now, pending_text: llm.text });
    let written;
    try {
      written = await turnCommitRepository.commitRespondTurn(this.db, {
        lockTimeoutMs: this.config.turnCommitLockTimeoutMs,
        branchId: state.branch.id,
        floorId: state.floor.id,
        runId: run.id,
        accountId: state.session.account_id,
        sessionId: state.session.id,
        floor: {
          token_in: turn.tokenIn,
          token_out: turn.tokenOut,
          reasoning_text: reasoning,
          state_snapshot: JSON.stringify(turn.stateSnapshot),
        },
        page: { id: pageId, checksum: pageChecksum(turn.output), messages },
        promptSnapshot: promptSnapshotColumns(state.prompt),
        localView: JSON.stringify(state.engineInput.variables?.local ?? {}),
        log,
        event,
        run: { phase_seq: run.row.phase_seq, pending_text: llm.text, last_event_seq: lastEventSeq },
        now,
      });
    } catch (error) {
      run.row = previousRow;
      throw error;
    }
    if (!written) {
      run.row = previousRow;
      return undefined;
    }
    const page: PageWithMessages = { page: written.page, messages: written.messages };
    const result = this.resultOf(state, run, written.floor, page, text, reasoning, llm);
    const staged = [run.stage('run', run.snapshot()), run.stage('done', result)];
    run.deliver(staged);
    run.ended();
    void this.events.wake(state.project.id, written.eventSequence);
    if (state.history)
      rememberCommittedFloor(state.session.id, state.history.revision, state.floor, [
        ...state.history.inputMessages,
        ...page.messages,
      ]);
    return result;
  }
}

/** The variable writes the turn's macros staged (runtime trace). */
function stagedMutationsOf(state: PreparedTurnState): StageableMutation[] {
  return (state.prompt.runtime_trace.macro.staged_mutations ?? []) as unknown as StageableMutation[];
}
