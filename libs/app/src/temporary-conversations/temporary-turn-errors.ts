import { DomainError } from '@hearth/domain';

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
