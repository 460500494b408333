import { DomainError } from '@hearth/domain';
import { describeJobError, JobFailure } from './job-failure';
import { decideAfterFailure, retryDelayMs } from './job-retry-policy';

describe('job retry policy', () => {
  const backoff = { baseMs: 1000, maxMs: 10_000 };

  it('doubles the delay per attempt up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => retryDelayMs(a, backoff))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect(retryDelayMs(500, backoff)).toBe(10_000);
  });

  it('retries a retryable failure until the last attempt, then dead-letters', () => {
    expect(
      decideAfterFailure({ attempt: 1, maxAttempts: 3, errorClass: 'retryable', backoff, now: 100 }),
    ).toEqual({
      status: 'retry_waiting',
      availableAt: 1100,
    });
    expect(
      decideAfterFailure({ attempt: 2, maxAttempts: 3, errorClass: 'uncertain', backoff, now: 100 }),
    ).toEqual({
      status: 'retry_waiting',
      availableAt: 2100,
    });
    expect(
      decideAfterFailure({ attempt: 3, maxAttempts: 3, errorClass: 'retryable', backoff, now: 100 }),
    ).toEqual({
      status: 'dead_letter',
    });
  });

  it('dead-letters a fatal failure at the first attempt', () => {
    expect(decideAfterFailure({ attempt: 1, maxAttempts: 5, errorClass: 'fatal', backoff, now: 0 })).toEqual({
      status: 'dead_letter',
    });
  });

  it('describes errors with a bounded message, a code and a class', () => {
    expect(describeJobError(new JobFailure('bad binding', 'agent_binding_invalid', 'fatal'))).toEqual({
      last_error: 'bad binding',
      last_error_code: 'agent_binding_invalid',
      last_error_class: 'fatal',
    });
    expect(describeJobError(new DomainError('project_access_denied', 403, 'no'))).toMatchObject({
      last_error_code: 'project_access_denied',
      last_error_class: 'fatal',
    });
    expect(describeJobError(new DomainError('resource_busy', 503, 'busy')).last_error_class).toBe(
      'retryable',
    );
    const long = describeJobError(new Error('x'.repeat(5000)));
    expect(long).toMatchObject({ last_error_code: 'job_failed', last_error_class: 'retryable' });
    expect(long.last_error.length).toBe(1001);
    expect(describeJobError('plain').last_error).toBe('plain');
  });
});
