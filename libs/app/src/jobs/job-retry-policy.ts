import type { JobErrorClass } from './job-failure';

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/** Delay before attempt `attempt + 1`: `baseMs * 2^(attempt-1)`, capped at `maxMs`. */
export function retryDelayMs(attempt: number, backoff: Backoff): number {
  const exponent = Math.max(0, attempt - 1);
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(exponent, 30));
}

export type FailureDecision = { status: 'retry_waiting'; availableAt: number } | { status: 'dead_letter' };

/** What a failed attempt leads to: another try later, or `dead_letter` (fatal, or attempts spent). */
export function decideAfterFailure(input: {
  attempt: number;
  maxAttempts: number;
  errorClass: JobErrorClass;
  backoff: Backoff;
  now: number;
}): FailureDecision {
  if (input.errorClass === 'fatal' || input.attempt >= input.maxAttempts) return { status: 'dead_letter' };
  return { status: 'retry_waiting', availableAt: input.now + retryDelayMs(input.attempt, input.backoff) };
}
