import { Inject, Injectable } from '@nestjs/common';
import { DomainError, newId } from '@hearth/domain';
import { buildPrompt } from '@hearth/domain/prompt/engine';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  conversationRepository,
  generationRunsRepository,
  inTransaction,
  isUniqueViolation,
  type BranchRow,
  type Db,
  type FloorRow,
  type GenerationRunRow,
  type MessageRow,
  type Tx,
} from '@hearth/persistence';
import { CONFIG, DB, LOGGER, type AppConfig, type JsonLogger, type LlmParams } from '@hearth/platform';
import { ensureConversationWritable, requireFloor } from '../conversation/conversation-access';
import {
  branchNotFound,
  floorNotCommitted,
  generationConflict,
  generationTargetStale,
} from '../conversation/conversation-errors';
import {
  appendUserFloor,
  discardGeneratingFloor,
  startRespondTurn,
  type AppendedFloor,
} from '../conversation/floor-writes';
import { loadFloorsWithPages } from '../conversation/floor-reads';
import { ensureMainBranch, MAIN_BRANCH } from '../conversation/session-conversation';
import { ResolveModelForTurnUseCase } from '../llm-profiles/resolve-model-for-turn.use-case';
import { orchestrationError } from './generate-errors';
import { TurnRunner, type PreparedTurn } from './generate-run';
import { GenerationSlots } from './generation-slots';
import type { PreparedTurnState, TurnKind, TurnRequest } from './generate-turn.types';
import { RUN_LEASE_MS, RunRegistry } from './runs/run-registry';
import { RUN_ID_PREFIX } from './runs/live-run';
import { checkRetryStateReplay, prepareTurnStateWrites } from './session-state-writes';
import { loadTurnContext } from './turn-context';
import type { TurnContext } from './turn-context.types';
import { yieldToPendingIo } from './yield-to-pending-io';

/** Without a `timeout_ms` from the request or the binding, a model call may take this long. */
export const DEFAULT_GENERATION_TIMEOUT_MS = 300_000;

const floorNotRetryable = (floorId: string) =>
  new DomainError('floor_not_retryable', 409, `Floor ${floorId} has no user input to generate from`, {
    floor_id: floorId,
  });

/**
 * Starts a turn of any kind (docs/decisions.md "Turns and runs"): checks access and state, loads the
 * turn context, assembles the prompt, resolves the model, then takes the branch's generation lock in
 * one transaction (respond: the `generating` floor with the user's input page; every kind: the
 * `running` run row; a second turn on the branch gets 409 `generation_conflict`). Every check fails
 * before anything is written and before any SSE header, so errors here are plain HTTP errors. The
 * returned turn is then executed by the transport (`PreparedTurn.execute`).
 */
@Injectable()
export class GenerateTurnUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly resolveModel: ResolveModelForTurnUseCase,
    private readonly registry: RunRegistry,
    private readonly runner: TurnRunner,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {
    this.slots = new GenerationSlots(config.generationConcurrency);
  }

  private readonly slots: GenerationSlots;
  /**
   * `session:branch` of the responds of this process between their provider call's start and the
   * decision of their lock, each with a promise settled at that decision.
   */
  private readonly startingBranches = new Map<string, Promise<void>>();

  /**
   * Waits for a generation slot (503 `generation_queue_timeout`), then prepares the turn; the slot is
   * released when the turn has ended, or at once when preparing fails. An unexpected failure (not a
   * domain error, not the database being unavailable or busy) answers 500 `orchestration_failed`.
   */
  async prepare(actor: Actor, request: TurnRequest): Promise<PreparedTurn> {
    const release = await this.slots.acquire(this.config.generationQueueTimeoutMs);
    try {
      const prepared = await this.prepareTurn(actor, request);
      prepared.onSettled(release);
      return prepared;
    } catch (error) {
      release();
      throw orchestrationError(error, this.logger);
    }
  }

  private async prepareTurn(actor: Actor, request: TurnRequest): Promise<PreparedTurn> {
    switch (request.kind) {
      case 'respond':
        return this.prepareRespond(actor, request);
      case 'regenerate': {
        const { floor } = await this.headOfBranch(actor, request.sessionId, request.branch_id ?? null);
        return this.prepareRetry(actor, request, 'regenerate', floor.id, null, null);
      }
      case 'retry_floor':
        return this.prepareRetry(actor, request, 'retry_floor', request.floorId, null, null);
      case 'retry_step':
        return this.prepareRetry(
          actor,
          request,
          'retry_step',
          request.floorId,
          null,
          request.from_step_index,
        );
      case 'edit_and_regenerate': {
        const message = await generationRunsRepository.findMessage(this.db, request.messageId);
        if (!message) throw new DomainError('message_not_found', 404, 'Message not found');
        return this.prepareRetry(actor, request, 'edit_and_regenerate', message.floor_id, message, null);
      }
    }
  }

  private async prepareRespond(
    actor: Actor,
    request: Extract<TurnRequest, { kind: 'respond' }>,
  ): Promise<PreparedTurn> {
    const load = () =>
      this.context(actor, {
        sessionId: request.sessionId,
        branchId: request.branch_id ?? null,
        sourceFloorId: request.source_floor_id ?? null,
        userInput: request.message,
        request,
      });
    // The model is resolved while the context loads (both only read).
    const model = this.resolve(actor, request.sessionId, request);
    model.catch(() => undefined);
    let ctx = await load();
    // Session state writes are checked before anything is written (a turn without any awaits nothing).
    const stateWrites = request.session_state_writes?.length
      ? await prepareTurnStateWrites(
          this.db,
          this.config,
          ctx.session.account_id,
          request.session_state_writes,
          ctx.parentFloor,
        )
      : null;
    if (ctx.parentFloor?.state === 'generating') {
      // The head is another turn's generating floor: 409, unless that turn's process died (its run's
      // lease expired): then its floor is removed and the context read again.
      await inTransaction(this.db, async ({ tx }) => {
        await conversationRepository.lockBranch(tx, ctx.branch.id);
        await this.clearStale(tx, ctx.branch.id, Date.now(), true);
      });
      ctx = await load();
    }
    // `source_floor_id` on respond names the floor the client answers: it must still be the head.
    if (request.source_floor_id && ctx.parentFloor?.id !== ctx.branch.head_floor_id)
      throw generationTargetStale(ctx.branch.id);
    const running = ctx.runningRun;
    const { engineInput, prompt, target, params } = await this.assemble(actor, ctx, request, model);
    if (running && running.lease_expires_at >= Date.now()) throw generationConflict(ctx.branch.id);
    const userText = prompt.user_input_processed ?? request.message;
    const stream = request.generation_params?.stream ?? true;
    // The provider call starts now, in parallel with the lock transaction (A8); a turn that does not
    // get the lock aborts it. It starts after the lock instead when the branch's running run looked
    // stale, and when this process is already starting or running a turn on the branch (a double
    // submit): such a turn first waits until that turn's lock is decided, then gets its 409 (or the
    // lock) without a second provider request having been sent.
    const branchKey = `${ctx.session.id}:${ctx.branch.id}`;
    const starting = this.startingBranches.get(branchKey);
    if (starting) await starting;
    const contended = starting !== undefined || this.registry.generatesOn(ctx.branch.id);
    const upstream =
      running || contended ? null : this.runner.startUpstream({ target, prompt, params, stream });
    let decided = () => {};
    if (upstream) this.startingBranches.set(branchKey, new Promise<void>((resolve) => (decided = resolve)));
    try {
      const detach = request.detach === true;
      const respondState = (appended: AppendedFloor): PreparedTurnState => ({
        kind: 'respond',
        actor,
        session: ctx.session,
        project: ctx.project,
        role: ctx.role,
        branch: appended.branch,
        floor: appended.floor,
        edit: null,
        engineInput,
        prompt,
        target,
        params,
        stream,
        debug: request.debug_options ?? {},
        fromStepIndex: null,
        inputLength: request.message.length,
        upstream,
        history: { revision: ctx.historyRev, inputMessages: appended.input.messages },
        stateWrites,
      });
      const userMessages = [{ role: 'user' as const, content: userText, source: 'user' }];

      // The usual case in one autocommit statement (docs/decisions.md "Turn latency"); when one of its
      // checks does not pass, nothing was written and the locked path below decides.
      if (!running && ctx.branch.id !== MAIN_BRANCH) {
        const started = await startRespondTurn(
          this.db,
          {
            session: ctx.session,
            branchId: ctx.branch.id,
            messages: userMessages,
            expectedHeadFloorId: ctx.branch.head_floor_id,
          },
          this.newRun('respond', detach),
        ).catch((error: unknown) => {
          upstream?.abort();
          throw error;
        });
        if (started) return this.startRun(respondState(started), started.run);
      }

      // Awaited here, so the branch stays marked until the lock is decided.
      return await inTransaction(this.db, async ({ tx }) => {
        const branch = ctx.branch.id === MAIN_BRANCH ? await ensureMainBranch(tx, ctx.session) : ctx.branch;
        // appendUserFloor locks the branch; a stale run seen before is ended first (the index backs the rest).
        if (running) await this.clearStale(tx, branch.id, Date.now());
        const appended = await appendUserFloor(tx, {
          session: ctx.session,
          branchId: branch.id,
          messages: userMessages,
          expectedHeadFloorId: ctx.branch.id === MAIN_BRANCH ? null : ctx.branch.head_floor_id,
        }).catch(async (error: unknown) => {
          // The head moved because another turn is generating on the branch: that is the conflict.
          if (error instanceof DomainError && error.code === 'generation_target_stale') {
            if (await generationRunsRepository.findRunningOfBranch(tx, branch.id))
              throw generationConflict(branch.id);
          }
          throw error;
        });
        return this.lock(tx, respondState(appended), detach);
      }).catch((error: unknown) => {
        upstream?.abort();
        throw error;
      });
    } finally {
      if (upstream) {
        this.startingBranches.delete(branchKey);
        decided();
      }
    }
  }

  private async prepareRetry(
    actor: Actor,
    request: TurnRequest,
    kind: Exclude<TurnKind, 'respond'>,
    floorId: string,
    editTarget: MessageRow | null,
    fromStepIndex: number | null,
  ): Promise<PreparedTurn> {
    const notFoundCode = editTarget ? 'message_not_found' : 'floor_not_found';
    const grant = await requireFloor(this.access, this.db, actor, floorId, 'project.session.write', {
      notFoundCode,
      notFoundMessage: editTarget ? 'Message not found' : undefined,
      sessionKind: request.sessionKind ?? 'standard',
    });
    ensureConversationWritable(grant);
    const { floor } = grant;
    if (floor.state !== 'committed') throw floorNotCommitted(floor.id, floor.state);
    const [loaded] = await loadFloorsWithPages(this.db, [floor]);
    const inputPage = loaded.pages.find((p) => p.page.page_kind === 'input' && p.page.is_active);
    const userMessage = inputPage?.messages.find((m) => m.role === 'user');
    if (!inputPage || !userMessage) throw floorNotRetryable(floor.id);
    if (editTarget && (editTarget.page_id !== inputPage.page.id || editTarget.role !== 'user'))
      throw new DomainError(
        'invalid_message_scope',
        400,
        'Only the user message of the floor’s active input page can be edited and regenerated',
        { message_id: editTarget.id },
      );
    // No tools yet: a turn has exactly one generation step.
    if (fromStepIndex !== null && fromStepIndex !== 1)
      throw new DomainError('retry_step_not_found', 404, `Floor ${floor.id} has no step ${fromStepIndex}`, {
        floor_id: floor.id,
        step_count: 1,
      });
    // The floor keeps the session state its turn wrote: a retry must be allowed to replay it (read while
    // the context loads; checked again in the commit).
    const confirmed = request.confirmed_session_state_mutation_ids ?? null;
    const replay = checkRetryStateReplay(this.db, floor.id, confirmed);
    replay.catch(() => undefined);
    const content = editTarget ? (request as { content: string }).content : userMessage.content;

    const ctx = await this.context(actor, {
      sessionId: floor.session_id,
      branchId: floor.branch_id,
      sourceFloorId: floor.parent_floor_id,
      userInput: content,
      request,
      attemptId: newId('att'),
    });
    await replay;
    if (!floor.parent_floor_id) {
      // Floor 0 with a user input: nothing came before it.
      ctx.engineInput.history = [];
      ctx.engineInput.timed_state = null;
      ctx.engineInput.next_floor_no = 0;
    }
    const { engineInput, prompt, target, params } = await this.assemble(actor, ctx, request);

    return inTransaction(this.db, async ({ tx }) => {
      const branch = await conversationRepository.lockBranch(tx, floor.branch_id);
      if (!branch) throw branchNotFound();
      await this.clearStale(tx, branch.id, Date.now());
      if (await conversationRepository.findGeneratingFloor(tx, branch.id))
        throw generationConflict(branch.id);
      const state: PreparedTurnState = {
        kind,
        actor,
        session: grant.session,
        project: grant.project,
        role: grant.role,
        branch,
        floor,
        edit: editTarget ? { message: editTarget, content: prompt.user_input_processed ?? content } : null,
        engineInput,
        prompt,
        target,
        params,
        stream: request.generation_params?.stream ?? true,
        debug: request.debug_options ?? {},
        fromStepIndex,
        inputLength: content.length,
        confirmedStateMutationIds: confirmed,
      };
      return this.lock(tx, state, request.detach === true);
    });
  }

  /** The head floor of a session's branch (regenerate's target); 409 `floor_not_retryable` when empty. */
  private async headOfBranch(
    actor: Actor,
    sessionId: string,
    branchId: string | null,
  ): Promise<{ floor: FloorRow; branch: BranchRow }> {
    const ctx = await loadTurnContext(
      this.db,
      actor,
      { sessionId, branchId, intent: 'regenerate', userInput: null, access: 'write' },
      { access: this.access, config: this.config },
    );
    ensureConversationWritable(ctx);
    const head = ctx.parentFloor;
    if (!head) throw floorNotRetryable(ctx.branch.id);
    return { floor: head, branch: ctx.branch };
  }

  private async context(
    actor: Actor,
    input: {
      sessionId: string;
      branchId: string | null;
      sourceFloorId: string | null;
      userInput: string;
      request: TurnRequest;
      attemptId?: string;
    },
  ): Promise<TurnContext> {
    const { request } = input;
    const ctx = await loadTurnContext(
      this.db,
      actor,
      {
        sessionId: input.sessionId,
        branchId: input.branchId,
        sourceFloorId: input.sourceFloorId,
        intent: 'normal',
        userInput: input.userInput,
        requestInjections: request.prompt_runtime_injections ?? null,
        debug: { include_worldbook_matches: request.debug_options?.include_worldbook_matches === true },
        generationParams: {
          max_output_tokens: request.generation_params?.max_output_tokens ?? null,
          max_context_tokens: request.generation_params?.max_context_tokens ?? null,
        },
        access: 'write',
        attemptId: input.attemptId ?? null,
        sessionKind: request.sessionKind ?? 'standard',
      },
      { access: this.access, config: this.config },
    );
    ensureConversationWritable(ctx);
    return ctx;
  }

  /** The model of the turn (slot `narrator`: profile bindings, then `env`). */
  private resolve(actor: Actor, sessionId: string, request: TurnRequest) {
    return this.resolveModel.execute(
      actor,
      sessionId,
      'narrator',
      (request.generation_params ?? null) as Record<string, unknown> | null,
    );
  }

  /** The prompt built for the turn's model, and the call's parameters. */
  private async assemble(
    actor: Actor,
    ctx: TurnContext,
    request: TurnRequest,
    model?: ReturnType<GenerateTurnUseCase['resolve']>,
  ) {
    const resolved = await (model ?? this.resolve(actor, ctx.session.id, request));
    if (resolved.status !== 'ready')
      throw new DomainError('model_not_configured', 503, 'No model for this turn');
    const engineInput = ctx.engineInput;
    engineInput.provider = { kind: resolved.target.provider, model_id: resolved.target.model };
    await yieldToPendingIo();
    const prompt = withDynamicContext(buildPrompt(engineInput), request.dynamic_context ?? null);
    const params = { ...(resolved.params as LlmParams) };
    if (params.timeout_ms === undefined || params.timeout_ms === null)
      params.timeout_ms = DEFAULT_GENERATION_TIMEOUT_MS;
    if (params.max_output_tokens === undefined && request.generation_params?.max_output_tokens)
      params.max_output_tokens = request.generation_params.max_output_tokens;
    delete (params as Record<string, unknown>).max_context_tokens;
    delete (params as Record<string, unknown>).stream;
    return { engineInput, prompt, target: resolved.target, params };
  }

  /**
   * A running run of the branch whose lease expired (its process died) is ended and its generating
   * floor removed, so the branch is not locked forever; a live one answers 409 `generation_conflict`.
   */
  private async clearStale(tx: Tx, branchId: string, now: number, required = false): Promise<void> {
    const stale = await generationRunsRepository.findRunningOfBranch(tx, branchId);
    if (!stale) {
      if (required) throw generationConflict(branchId);
      return;
    }
    const expired = await generationRunsRepository.expireStale(tx, stale.id, now);
    if (!expired) throw generationConflict(branchId);
    if (expired.run_type === 'respond' && expired.floor_id)
      await discardGeneratingFloor(tx, expired.floor_id, now);
  }

  /** The values of a new `running` run (the rest comes from the turn). */
  private newRun(runType: TurnKind, detached: boolean) {
    return {
      id: newId(RUN_ID_PREFIX),
      run_type: runType,
      detached,
      temp_id: newId('tmp'),
      lease_expires_at: Date.now() + RUN_LEASE_MS,
    };
  }

  /** Inserts the `running` run: the branch's lock for every kind of turn (partial unique index). */
  private async lock(tx: Tx, state: PreparedTurnState, detach: boolean): Promise<PreparedTurn> {
    const now = Date.now();
    const run = this.newRun(state.kind, detach);
    let inserted;
    try {
      inserted = await generationRunsRepository.insert(tx, {
        ...run,
        account_id: state.session.account_id,
        session_id: state.session.id,
        branch_id: state.branch.id,
        floor_id: state.floor.id,
        status: 'running',
        phase: 'generating',
        error: null,
        pending_reasoning: null,
        started_at: now,
        updated_at: now,
        completed_at: null,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw generationConflict(state.branch.id);
      throw error;
    }
    return this.startRun(state, inserted);
  }

  /** The turn, ready for its transport, once its `running` run row exists. */
  private startRun(state: PreparedTurnState, inserted: GenerationRunRow): PreparedTurn {
    return this.runner.prepared(state, this.registry.create(inserted));
  }
}

/**
 * A temporary conversation's `dynamic_context` (spec 2): a system message just before the final user
 * message of the prompt (at the end when there is none), for this call only. The stored prompt
 * snapshot keeps ids and digests, never messages, so the text is not stored anywhere.
 */
function withDynamicContext<P extends { messages: ReadonlyArray<{ role: string; content: string }> }>(
  prompt: P,
  dynamicContext: string | null,
): P {
  if (dynamicContext === null || dynamicContext.trim() === '') return prompt;
  const messages = [...prompt.messages];
  const last = messages.length - 1;
  const at = last >= 0 && messages[last].role === 'user' ? last : messages.length;
  messages.splice(at, 0, { role: 'system', content: dynamicContext });
  return { ...prompt, messages };
}
