import { DomainError } from '@hearth/domain';
import { LlmError } from '@hearth/platform';
import { generationError } from './generate-errors';

describe('generationError', () => {
  it('maps provider failures to the chat route codes', () => {
    const cases: Array<[LlmError, string, number]> = [
      [new LlmError('timeout', 'slow'), 'generation_timeout', 504],
      [new LlmError('aborted', 'gone'), 'generation_cancelled', 499],
      [new LlmError('upstream_status', 'Upstream answered 429', 429), 'generation_upstream_failed', 502],
      [new LlmError('invalid_response', 'bad json'), 'generation_invalid_response', 502],
      [new LlmError('network', 'ECONNREFUSED'), 'generation_upstream_unreachable', 502],
      [new LlmError('configuration', 'no model'), 'model_not_configured', 503],
    ];
    for (const [error, code, status] of cases) {
      const mapped = generationError(error, null);
      expect([mapped.code, mapped.status]).toEqual([code, status]);
    }
    expect(generationError(new LlmError('upstream_status', 'x', 429), null).details).toEqual({
      upstream_status: 429,
    });
  });

  it('a cancel reason wins over whatever the aborted call threw; domain errors pass through', () => {
    const cancelled = generationError(new LlmError('network', 'socket hang up'), 'client_disconnected');
    expect(cancelled).toMatchObject({
      code: 'generation_cancelled',
      status: 499,
      details: { reason: 'client_disconnected' },
    });
    const conflict = new DomainError('commit_conflict', 409, 'moved');
    expect(generationError(conflict, null)).toBe(conflict);
  });

  it('answers 500 orchestration_failed for what is not a provider failure', () => {
    const failure = generationError(new TypeError('boom'), null);
    expect(failure).toMatchObject({ code: 'orchestration_failed', status: 500 });
    expect(failure.message).not.toContain('boom');
  });
});
