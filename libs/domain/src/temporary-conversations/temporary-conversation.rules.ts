import { createHash } from 'node:crypto';
import { DomainError } from '../errors';

/** Spec 2 "Limits" and "Temporary conversations". */
export const TEMPORARY_CONVERSATION_LIMITS = {
  title_max: 200,
  purpose_max: 120,
  ttl_seconds_min: 1,
  ttl_seconds_max: 86_400,
  dynamic_context_max: 200_000,
  /** A message appended through `messages` or `input_message` (as a chat message, docs/decisions.md). */
  message_max: 200_000,
} as const;

export const TEMPORARY_RETENTION_POLICIES = ['delete_on_finalize', 'ttl', 'keep_for_debug'] as const;
export type TemporaryRetention = (typeof TEMPORARY_RETENTION_POLICIES)[number];
export const TEMPORARY_MESSAGE_ROLES = ['user', 'assistant', 'system'] as const;
export type TemporaryMessageRole = (typeof TEMPORARY_MESSAGE_ROLES)[number];
export type TemporaryStatus = 'active' | 'finalized' | 'discarded' | 'cancelled' | 'expired';
export type TemporaryTerminalMove = 'finalize' | 'discard' | 'cancel';

export const TERMINAL_MOVE_STATUS: Record<TemporaryTerminalMove, 'finalized' | 'discarded' | 'cancelled'> = {
  finalize: 'finalized',
  discard: 'discarded',
  cancel: 'cancelled',
};

export const conversationNotFound = () =>
  new DomainError('conversation_not_found', 404, 'Temporary conversation not found');

export const conversationNotActive = (id: string, status: string) =>
  new DomainError('conversation_not_active', 409, `Temporary conversation ${id} is ${status}, not active`, {
    conversation_id: id,
    status,
  });

/**
 * The retention of a new conversation: `retention_policy` (default `delete_on_finalize`, else 400
 * `invalid_retention_policy`); `ttl` needs `ttl_seconds` (400 `ttl_required`), an integer 1-86400
 * (400 `invalid_ttl_seconds`); the other policies refuse `ttl_seconds` (400 `invalid_ttl_seconds`).
 */
export function normaliseRetention(
  policy: unknown,
  ttlSeconds: unknown,
): { retention_policy: TemporaryRetention; ttl_seconds: number | null } {
  const retention = policy === undefined || policy === null ? 'delete_on_finalize' : policy;
  if (
    typeof retention !== 'string' ||
    !(TEMPORARY_RETENTION_POLICIES as readonly string[]).includes(retention)
  )
    throw new DomainError(
      'invalid_retention_policy',
      400,
      `retention_policy must be one of ${TEMPORARY_RETENTION_POLICIES.join(', ')}`,
      { field: 'retention_policy' },
    );
  const given = ttlSeconds !== undefined && ttlSeconds !== null;
  if (retention !== 'ttl') {
    if (given)
      throw new DomainError(
        'invalid_ttl_seconds',
        400,
        'ttl_seconds is only accepted with retention_policy ttl',
        {
          field: 'ttl_seconds',
        },
      );
    return { retention_policy: retention as TemporaryRetention, ttl_seconds: null };
  }
  if (!given)
    throw new DomainError('ttl_required', 400, 'retention_policy ttl requires ttl_seconds', {
      field: 'ttl_seconds',
    });
  const { ttl_seconds_min: min, ttl_seconds_max: max } = TEMPORARY_CONVERSATION_LIMITS;
  if (typeof ttlSeconds !== 'number' || !Number.isInteger(ttlSeconds) || ttlSeconds < min || ttlSeconds > max)
    throw new DomainError(
      'invalid_ttl_seconds',
      400,
      `ttl_seconds must be an integer from ${min} to ${max}`,
      {
        field: 'ttl_seconds',
      },
    );
  return { retention_policy: 'ttl', ttl_seconds: ttlSeconds };
}

/**
 * A message to append (`messages`, respond's `input_message`): role `user`, `assistant` or `system`
 * (else 400 `invalid_message_role`), content a non-blank string (else 400 `empty_message_content`;
 * over 200,000 characters 400 `validation_error`).
 */
export function checkTemporaryMessage(
  role: unknown,
  content: unknown,
): { role: TemporaryMessageRole; content: string } {
  if (typeof role !== 'string' || !(TEMPORARY_MESSAGE_ROLES as readonly string[]).includes(role))
    throw new DomainError(
      'invalid_message_role',
      400,
      `role must be one of ${TEMPORARY_MESSAGE_ROLES.join(', ')}`,
      {
        field: 'role',
      },
    );
  if (typeof content !== 'string' || content.trim() === '')
    throw new DomainError('empty_message_content', 400, 'content must be a non-empty string', {
      field: 'content',
    });
  if (content.length > TEMPORARY_CONVERSATION_LIMITS.message_max)
    throw new DomainError('validation_error', 400, 'Invalid request', {
      fields: [
        { field: 'content', message: `at most ${TEMPORARY_CONVERSATION_LIMITS.message_max} characters` },
      ],
    });
  return { role: role as TemporaryMessageRole, content };
}

/** Whether an `active` conversation has passed its `expires_at` (policy `ttl` only). */
export function isDue(conversation: { status: string; expires_at: number | null }, now: number): boolean {
  return (
    conversation.status === 'active' && conversation.expires_at !== null && conversation.expires_at <= now
  );
}

/**
 * The source snapshot digest: sha256 over the source session's active-branch messages (id and content,
 * in transcript order) at creation; null without a source session.
 */
export function sourceDigest(
  messages: ReadonlyArray<{ message_id: string; content: string }> | null,
): string | null {
  if (messages === null) return null;
  const hash = createHash('sha256');
  for (const m of messages) hash.update(`${m.message_id}\u0000${m.content}\u0000`);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * A conversation is agent-private (spec 2 inspect) when it is `internal` or was made by an agent.
 */
export function isAgentPrivate(conversation: { visibility: string; agent_origin: unknown }): boolean {
  return conversation.visibility === 'internal' || conversation.agent_origin !== null;
}

/** The terminal time of a conversation (when it left `active`), or null while active. */
export function terminalTime(conversation: {
  finalized_at: number | null;
  discarded_at: number | null;
  cancelled_at: number | null;
  expired_at: number | null;
}): number | null {
  return (
    conversation.finalized_at ??
    conversation.discarded_at ??
    conversation.cancelled_at ??
    conversation.expired_at ??
    null
  );
}

/** Whether maintenance removes the bodies: `delete_on_finalize` or `ttl`, terminal, grace passed. */
export function cleanupDue(
  conversation: Parameters<typeof terminalTime>[0] & { retention_policy: string; cleaned_at: number | null },
  now: number,
  graceMs: number,
): boolean {
  if (conversation.retention_policy === 'keep_for_debug' || conversation.cleaned_at !== null) return false;
  const at = terminalTime(conversation);
  return at !== null && at + graceMs <= now;
}
