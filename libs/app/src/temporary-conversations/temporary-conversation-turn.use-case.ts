import { Inject, Injectable } from '@nestjs/common';
import { checkTemporaryMessage, conversationNotFound, DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  conversationRepository,
  temporaryConversationsRepository,
  type Db,
  type FloorRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { loadFloorsWithPages } from '../conversation/floor-reads';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import type { PreparedTurn } from '../turns/generate-run';
import { GenerateTurnUseCase } from '../turns/generate-turn.use-case';
import type { TurnGenerationParams, TurnRequest, TurnResult } from '../turns/generate-turn.types';
import { ensureActive, requireConversation, type ConversationGrant } from './temporary-conversation-access';
import {
  conversationBusy,
  isBusyError,
  missingEffectiveUserTail,
  noPendingInput,
  retryTargetNotFound,
} from './temporary-turn-errors';

export const TOOL_TRANSPORT_PREFERENCES = ['auto', 'native', 'text_protocol'] as const;
/** The purpose whose conversations may choose a tool transport (spec 2). */
export const GRAPH_ASSISTANT_PURPOSE = 'graph-assistant';

interface TemporaryTurnCommon {
  dynamic_context?: string | null;
  generation_params?: TurnGenerationParams | null;
  tool_transport_preference?: (typeof TOOL_TRANSPORT_PREFERENCES)[number] | null;
}

export type TemporaryTurnInput = TemporaryTurnCommon &
  (
    | { kind: 'respond'; input_message?: { role?: unknown; content?: unknown } | null }
    | {
        kind: 'retry';
        floor_id: string;
        confirmed_execution_ids?: string[] | null;
        confirmed_session_state_mutation_ids?: string[] | null;
      }
    | {
        kind: 'retry_step';
        floor_id: string;
        from_step_index: number;
        confirmed_execution_ids?: string[] | null;
        confirmed_session_state_mutation_ids?: string[] | null;
      }
  );

/** Spec 2's respond result of a temporary conversation (JSON `data`, and SSE `done`). */
export interface TemporaryTurnResult {
  conversation_id: string;
  branch_id: typeof MAIN_BRANCH;
  floor_id: string;
  floor_no: number;
  page_id: string;
  generated_text: string;
  total_usage: TurnResult['total_usage'];
  final_state: TurnResult['final_state'];
  summaries: string[];
  discarded_from_step_index?: number;
  irreversible_side_effects?: unknown[];
}

/** A turn result as the temporary conversation routes show it (the branch is always `main`). */
export function temporaryTurnResult(
  conversationId: string,
  kind: TemporaryTurnInput['kind'],
  result: TurnResult,
): TemporaryTurnResult {
  return {
    conversation_id: conversationId,
    branch_id: MAIN_BRANCH,
    floor_id: result.floor_id,
    floor_no: result.floor_no,
    page_id: result.page_id,
    generated_text: result.generated_text,
    total_usage: result.total_usage,
    final_state: result.final_state,
    summaries: result.summaries,
    ...(kind === 'retry_step'
      ? {
          discarded_from_step_index: result.discarded_from_step_index ?? 1,
          irreversible_side_effects: result.irreversible_side_effects ?? [],
        }
      : {}),
  };
}

/**
 * `POST /temporary-conversations/:id/respond`, `/retry` and `/retry-step` (spec 2): the normal turn
 * machinery (GenerateTurnUseCase) on the conversation's session, branch `main`. Owner only, `active`
 * only. Respond with `input_message` (role `user`) is a normal respond: the message's floor is
 * appended in the turn's lock transaction. Respond without one answers the pending input: the head
 * floor appended by `messages` whose message is a `user` one and has no reply yet gets its output page
 * (a retry of that floor); no such floor answers 409 `no_pending_input`, a head (or input_message)
 * that is not a user message 409 `missing_effective_user_tail`, nothing appended. A running
 * generation answers 409 `conversation_busy`. `dynamic_context` reaches the model for this turn only.
 */
@Injectable()
export class TemporaryConversationTurnUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly generate: GenerateTurnUseCase,
  ) {}

  async prepare(actor: Actor, conversationId: string, input: TemporaryTurnInput): Promise<PreparedTurn> {
    const grant = await requireConversation(
      { access: this.access, db: this.db, logs: this.logs },
      actor,
      conversationId,
      'project.session.write',
    );
    const preference = input.tool_transport_preference ?? 'auto';
    if (preference !== 'auto' && grant.conversation.purpose !== GRAPH_ASSISTANT_PURPOSE)
      throw new DomainError(
        'invalid_tool_mode',
        400,
        `Only conversations with purpose ${GRAPH_ASSISTANT_PURPOSE} may choose a tool transport`,
        {
          tool_transport_preference: preference,
          purpose: grant.conversation.purpose,
          allowed_purpose: GRAPH_ASSISTANT_PURPOSE,
        },
      );
    const message =
      input.kind === 'respond' && input.input_message
        ? checkTemporaryMessage(input.input_message.role, input.input_message.content)
        : null;
    ensureActive(grant);
    const shared = {
      sessionKind: 'temporary' as const,
      dynamic_context: input.dynamic_context ?? null,
      generation_params: input.generation_params ?? null,
    };
    let request: TurnRequest;
    if (input.kind === 'respond') {
      if (message) {
        if (message.role !== 'user') throw missingEffectiveUserTail(conversationId);
        request = { kind: 'respond', sessionId: conversationId, message: message.content, ...shared };
      } else {
        request = { kind: 'retry_floor', floorId: (await this.pendingInput(grant)).id, ...shared };
      }
    } else {
      const floor = await conversationRepository.findFloor(this.db, input.floor_id);
      if (!floor || floor.session_id !== conversationId) throw retryTargetNotFound();
      request =
        input.kind === 'retry'
          ? { kind: 'retry_floor', floorId: floor.id, ...shared }
          : { kind: 'retry_step', floorId: floor.id, from_step_index: input.from_step_index, ...shared };
    }
    const prepared = await this.generate.prepare(actor, request).catch((error: unknown) => {
      throw mapTurnError(error, conversationId, input.kind);
    });
    await temporaryConversationsRepository.touch(this.db, conversationId, Date.now());
    return prepared;
  }

  /** The head floor of `main` when it is a `messages` floor waiting for its reply (see the class). */
  private async pendingInput(grant: ConversationGrant): Promise<FloorRow> {
    const id = grant.conversation.session_id;
    const branch = await conversationRepository.findBranchByName(this.db, id, MAIN_BRANCH);
    const head = branch?.head_floor_id
      ? await conversationRepository.findFloor(this.db, branch.head_floor_id)
      : null;
    if (!head) throw noPendingInput(id);
    if (head.state === 'generating') throw conversationBusy(id);
    const [loaded] = await loadFloorsWithPages(this.db, [head]);
    const active = loaded.pages.filter((p) => p.page.is_active);
    if (active.some((p) => p.page.page_kind !== 'input')) throw noPendingInput(id);
    const last = active.flatMap((p) => p.messages).at(-1);
    if (!last) throw noPendingInput(id);
    if (last.role !== 'user') throw missingEffectiveUserTail(id);
    return head;
  }
}

/** The normal turn's errors in the words of the temporary conversation routes. */
function mapTurnError(error: unknown, conversationId: string, kind: TemporaryTurnInput['kind']): unknown {
  if (!(error instanceof DomainError)) return error;
  if (isBusyError(error)) return conversationBusy(conversationId);
  switch (error.code) {
    case 'floor_not_retryable':
      return missingEffectiveUserTail(conversationId);
    case 'floor_not_found':
      return kind === 'respond' ? noPendingInput(conversationId) : retryTargetNotFound();
    case 'session_not_found':
    case 'not_found':
      return conversationNotFound();
    default:
      return error;
  }
}
