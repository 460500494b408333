import { DomainError } from '@hearth/domain';
import { INJECTION_LIMITS } from '@hearth/domain/prompt/injections';
import type { PromptInjectionRow } from '@hearth/persistence';

export const injectionNotFound = () => new DomainError('injection_not_found', 404, 'Injection not found');

export const injectionQuotaExceeded = (scope: 'session' | 'branch') =>
  new DomainError(
    'injection_scope_quota_exceeded',
    400,
    `A ${scope} holds at most ${INJECTION_LIMITS.per_scope} persistent injections`,
    { scope, limit: INJECTION_LIMITS.per_scope },
  );

/** What an operation log keeps of an injection: structure and lengths, never the title or content. */
export function injectionRef(row: PromptInjectionRow): Record<string, unknown> {
  return {
    scope: row.scope,
    source_kind: row.source_kind,
    placement: row.placement,
    placement_params: row.placement_params,
    order: row.order,
    enabled: row.enabled,
    mode_scope: row.mode_scope,
    ttl_ms: row.ttl_ms,
    title_length: row.title.length,
    content_length: row.content.length,
  };
}
