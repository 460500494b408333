import { DomainError } from '@hearth/domain';

export const SSRF_BLOCKED = 'ssrf_blocked';

/** The refusal of the network guard: 400 `ssrf_blocked`. The message names the host, never a key. */
export function ssrfBlocked(host: string, reason: string): DomainError {
  return new DomainError(SSRF_BLOCKED, 400, `Refused to connect to ${host}: ${reason}`);
}

/**
 * The guard's refusal inside an error, however deeply an SDK or fetch wrapped it (`fetch failed` with
 * `cause`, an SDK's connection error with `cause`, an LlmError with `cause`); null when there is none.
 */
export function findSsrfBlocked(error: unknown): DomainError | null {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    if (current instanceof DomainError && current.code === SSRF_BLOCKED) return current;
    // Happy eyeballs reports the failure of every address it tried in an AggregateError.
    if (current instanceof AggregateError) {
      for (const inner of current.errors) {
        const found = findSsrfBlocked(inner);
        if (found) return found;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

export function isSsrfBlocked(error: unknown): boolean {
  return findSsrfBlocked(error) !== null;
}
