import { DomainError } from '@hearth/domain';

/** The turn machinery's codes for "another turn is running on `main`" (a generating floor, a moving head). */
const BUSY_CODES: ReadonlySet<unknown> = new Set([
  'generation_conflict',
  'generation_target_stale',
  'floor_not_committed',
]);

/** Whether an error of the turn machinery means another turn is running: 409 `conversation_busy`. */
export const isBusyError = (error: unknown): boolean => BUSY_CODES.has((error as { code?: unknown })?.code);

export const conversationBusy = (conversationId: string) =>
  new DomainError('conversation_busy', 409, `Temporary conversation ${conversationId} is generating`, {
    conversation_id: conversationId,
  });

export const noPendingInput = (conversationId: string) =>
  new DomainError(
    'no_pending_input',
    409,
    'Nothing to answer: send input_message, or append a user message first',
    { conversation_id: conversationId },
  );

export const missingEffectiveUserTail = (conversationId: string) =>
  new DomainError(
    'missing_effective_user_tail',
    409,
    'The input to answer does not end with a user message',
    { conversation_id: conversationId },
  );

export const retryTargetNotFound = () =>
  new DomainError('retry_target_not_found', 404, 'Retry target floor not found in this conversation');
