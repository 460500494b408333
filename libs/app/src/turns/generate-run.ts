import { Inject, Injectable } from '@nestjs/common';
import { DomainError, toStorableText } from '@hearth/domain';
import { classifyDatabaseError } from '@hearth/persistence';
import {
  LLM_CLIENT,
  LOGGER,
  type JsonLogger,
  type LlmClient,
  type LlmMessage,
  type LlmParams,
  type LlmResult,
  type LlmStreamEvent,
  type LlmTarget,
} from '@hearth/platform';
import { TurnCommitter } from './commit-turn';
import { commitBusy, generationCancelled, generationError } from './generate-errors';
import type { PreparedTurnState, TurnResult } from './generate-turn.types';
import type { LiveRun, RunListener, RunSnapshot } from './runs/live-run';
import { yieldToPendingIo } from './yield-to-pending-io';

/** How a turn ended. */
export type TurnOutcome = { ok: true; result: TurnResult } | { ok: false; error: DomainError };

/**
 * A provider call that may start before the turn holds its branch's lock (performance-and-reliability.md
 * A8: the upstream request runs in parallel with the lock transaction). Events that arrive before a
 * consumer attaches are kept, in order, and handed over on `attach`; a turn that does not get the lock
 * aborts it.
 */
export class UpstreamCall {
  private readonly controller = new AbortController();
  private buffered: LlmStreamEvent[] = [];
  private sink: ((event: LlmStreamEvent) => void) | null = null;
  readonly result: Promise<LlmResult>;

  constructor(
    llm: LlmClient,
    request: { target: LlmTarget; messages: LlmMessage[]; params: LlmParams; stream: boolean },
  ) {
    this.result = llm.generate({
      ...request,
      signal: this.controller.signal,
      onEvent: (event) => (this.sink ? this.sink(event) : this.buffered.push(event)),
    });
    // Observed by the consumer; a call aborted before anyone awaited it must not be unhandled.
    this.result.catch(() => undefined);
  }

  attach(sink: (event: LlmStreamEvent) => void): void {
    for (const event of this.buffered.splice(0)) sink(event);
    this.sink = sink;
  }

  abort(reason = 'not_started'): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Error(reason));
  }

  /** Aborts this call whenever `signal` aborts. */
  follow(signal: AbortSignal): void {
    if (signal.aborted) this.abort();
    else signal.addEventListener('abort', () => this.abort(), { once: true });
  }
}

/** What the transport learns as soon as the lock is held (spec 2 SSE `start`). */
export interface TurnStart {
  floor_id: string;
  floor_no: number;
  branch_id: string;
  run_id: string;
}

/**
 * A turn holding its branch's lock, ready to call the model. The transport attaches a listener (SSE)
 * or not (JSON), cancels on client disconnect unless the run is detached, and runs `execute` once.
 */
export class PreparedTurn {
  private execution: Promise<TurnOutcome> | null = null;
  private settled: Array<() => void> = [];

  constructor(
    readonly state: PreparedTurnState,
    readonly run: LiveRun,
    private readonly runner: TurnRunner,
  ) {}

  get start(): TurnStart {
    return {
      floor_id: this.state.floor.id,
      floor_no: this.state.floor.floor_no,
      branch_id: this.state.branch.id,
      run_id: this.run.id,
    };
  }

  get detached(): boolean {
    return this.run.detached;
  }

  snapshot(): RunSnapshot {
    return this.run.snapshot();
  }

  attach(listener: RunListener | null): void {
    this.run.attach(listener);
  }

  cancel(reason: string): void {
    this.run.cancel(reason);
  }

  /** Generates and commits (or records the failure); never throws. Runs once. */
  execute(): Promise<TurnOutcome> {
    this.execution ??= this.runner.execute(this.state, this.run).finally(() => {
      for (const action of this.settled.splice(0)) action();
    });
    return this.execution;
  }

  /** Runs `action` once the turn has committed or failed (its generation slot is released). */
  onSettled(action: () => void): void {
    this.settled.push(action);
  }
}

/**
 * Runs a prepared turn: `start` and a `run` snapshot, the provider call (chunks and reasoning deltas
 * written to the client as they arrive), then the commit transaction or the failure record, then
 * `done` or `error` (docs/decisions.md "Turns and runs").
 */
@Injectable()
export class TurnRunner {
  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    @Inject(LOGGER) private readonly logger: JsonLogger,
    private readonly committer: TurnCommitter,
  ) {}

  /** Starts the provider call of a turn (before or after its lock: see `UpstreamCall`). */
  startUpstream(state: Pick<PreparedTurnState, 'target' | 'prompt' | 'params' | 'stream'>): UpstreamCall {
    return new UpstreamCall(this.llm, {
      target: state.target,
      messages: state.prompt.messages,
      params: state.params,
      stream: state.stream,
    });
  }

  prepared(state: PreparedTurnState, run: LiveRun): PreparedTurn {
    return new PreparedTurn(state, run, this);
  }

  async execute(state: PreparedTurnState, run: LiveRun): Promise<TurnOutcome> {
    run.emit('start', {
      floor_id: state.floor.id,
      floor_no: state.floor.floor_no,
      branch_id: state.branch.id,
      run_id: run.id,
    });
    run.emit('run', run.snapshot());

    let text = '';
    let reasoning = '';
    let result: LlmResult;
    try {
      if (run.controller.signal.aborted) {
        state.upstream?.abort();
        throw generationCancelled(run.cancelReason ?? 'cancelled');
      }
      const upstream = state.upstream ?? this.startUpstream(state);
      upstream.follow(run.controller.signal);
      upstream.attach((event) => {
        if (event.type === 'text') {
          if (!event.text) return;
          text += event.text;
          run.row.pending_text = text;
          run.emit('chunk', { chunk: event.text });
        } else if (event.text) {
          reasoning += event.text;
          run.row.pending_reasoning = reasoning;
          run.emit('reasoning', { delta: event.text });
        }
      });
      result = await upstream.result;
      if (run.controller.signal.aborted) throw generationCancelled(run.cancelReason ?? 'cancelled');
      // A reply holding NUL or a broken surrogate is stored with U+FFFD there, not refused by Postgres.
      result = {
        ...result,
        text: toStorableText(result.text),
        reasoning_text: result.reasoning_text === null ? null : toStorableText(result.reasoning_text),
      };
    } catch (error) {
      const failure = generationError(error, run.cancelReason);
      if (failure.code === 'orchestration_failed')
        this.logger.error(
          {
            msg: 'turn orchestration failed',
            run_id: run.id,
            error: String(error),
            stack: (error as Error)?.stack,
          },
          'TurnRunner',
        );
      return this.fail(state, run, failure);
    }

    // A non-streamed answer (stream: false) still reaches a streaming client, as one chunk.
    if (!text && result.text) {
      run.row.pending_text = result.text;
      run.emit('chunk', { chunk: result.text });
    }
    // Other streams' chunks that arrived meanwhile go out before this turn's commit work.
    await yieldToPendingIo();
    run.update({ phase: 'committing', pending_text: result.text });
    try {
      const committed = await this.committer.commit(state, run, result);
      return { ok: true, result: committed };
    } catch (error) {
      if (!(error instanceof DomainError)) {
        // A lock the commit waited for longer than TURN_COMMIT_LOCK_TIMEOUT_MS: 503 `commit_busy`.
        if (classifyDatabaseError(error) === 'busy') return this.fail(state, run, commitBusy());
        this.logger.error(
          { msg: 'turn commit failed', run_id: run.id, error: String(error), stack: (error as Error)?.stack },
          'TurnRunner',
        );
        return this.fail(
          state,
          run,
          new DomainError('turn_commit_failed', 500, 'The turn could not be saved'),
        );
      }
      // A rule's 500 with the database's error behind it (`session_state_stage_failed`): log the cause.
      const cause = (error as { cause?: unknown }).cause;
      if (error.status >= 500 && cause !== undefined)
        this.logger.error(
          {
            msg: 'turn commit failed',
            run_id: run.id,
            code: error.code,
            error: String(cause),
            stack: (cause as Error)?.stack,
          },
          'TurnRunner',
        );
      return this.fail(state, run, error);
    }
  }

  private async fail(state: PreparedTurnState, run: LiveRun, error: DomainError): Promise<TurnOutcome> {
    try {
      await this.committer.recordFailure(state, run, error);
    } catch (recordError) {
      this.logger.error(
        { msg: 'recording a failed turn failed', run_id: run.id, error: String(recordError) },
        'TurnRunner',
      );
      run.ended();
    }
    return { ok: false, error };
  }
}
