import { DomainError } from '@hearth/domain';

/**
 * How a failed attempt is judged (spec 1 `last_error_class`): `fatal` goes to `dead_letter` at once
 * (invalid configuration, exceeded permission), `retryable` is tried again with backoff until
 * `max_attempts`, `uncertain` (the outcome is unknown, e.g. a lost worker) is retried like `retryable`.
 */
export type JobErrorClass = 'fatal' | 'retryable' | 'uncertain';

/** Thrown by job work to say how the failure should be handled and which code to record. */
export class JobFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly errorClass: JobErrorClass = 'retryable',
  ) {
    super(message);
    this.name = 'JobFailure';
  }
}

const MAX_ERROR_LENGTH = 1_000;

/** The `last_error*` fields recorded for an error: a bounded message, a code and a class. */
export function describeJobError(error: unknown): {
  last_error: string;
  last_error_code: string | null;
  last_error_class: JobErrorClass;
} {
  const message = error instanceof Error ? error.message : String(error);
  const last_error = message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
  if (error instanceof JobFailure)
    return { last_error, last_error_code: error.code, last_error_class: error.errorClass };
  if (error instanceof DomainError) {
    // A rule said no (bad input, missing permission): running it again gives the same answer.
    return {
      last_error,
      last_error_code: error.code,
      last_error_class: error.status < 500 ? 'fatal' : 'retryable',
    };
  }
  return { last_error, last_error_code: 'job_failed', last_error_class: 'retryable' };
}
