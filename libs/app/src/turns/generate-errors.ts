import { DomainError } from '@hearth/domain';
import { classifyDatabaseError } from '@hearth/persistence';
import { findSsrfBlocked, LlmError, type JsonLogger } from '@hearth/platform';

/**
 * A provider failure as the chat routes answer it (docs/decisions.md "Turns and runs"): 499
 * `generation_cancelled`, 504 `generation_timeout`, 502 `generation_upstream_failed` (with the
 * upstream status), 502 `generation_invalid_response`, 502 `generation_upstream_unreachable`, 400
 * `ssrf_blocked`. Messages never carry the key (the adapters redact them).
 */
export function generationError(error: unknown, cancelReason: string | null): DomainError {
  if (error instanceof DomainError) return error;
  if (cancelReason) return generationCancelled(cancelReason);
  if (!(error instanceof LlmError)) return orchestrationFailed();
  switch (error.kind) {
    case 'aborted':
      return generationCancelled('cancelled');
    case 'timeout':
      return new DomainError('generation_timeout', 504, 'The model did not answer in time');
    case 'upstream_status':
      return new DomainError('generation_upstream_failed', 502, error.message, {
        upstream_status: error.upstreamStatus,
      });
    case 'invalid_response':
      return new DomainError('generation_invalid_response', 502, error.message);
    case 'configuration':
      return new DomainError('model_not_configured', 503, error.message);
    default: {
      const ssrf = findSsrfBlocked(error);
      if (ssrf) return ssrf;
      return new DomainError('generation_upstream_unreachable', 502, error.message);
    }
  }
}

export function generationCancelled(reason: string): DomainError {
  return new DomainError('generation_cancelled', 499, 'The generation was cancelled', { reason });
}

/** 500 `orchestration_failed`: the turn failed inside the service, not at the provider or the commit. */
export function orchestrationFailed(): DomainError {
  return new DomainError('orchestration_failed', 500, 'The turn failed inside the service');
}

/**
 * What a failure while preparing a turn answers: domain errors as they are, the database being
 * unavailable or busy as the HTTP filter answers it (503), anything else 500 `orchestration_failed`
 * (logged with its stack).
 */
export function orchestrationError(error: unknown, logger: JsonLogger): unknown {
  if (error instanceof DomainError || classifyDatabaseError(error) !== null) return error;
  logger.error(
    { msg: 'turn orchestration failed', error: String(error), stack: (error as Error)?.stack },
    'GenerateTurnUseCase',
  );
  return orchestrationFailed();
}

/** 503 `commit_busy`: the turn's commit could not get its locks in time (spec 2: the chat commit error). */
export function commitBusy(): DomainError {
  return new DomainError('commit_busy', 503, 'The conversation is busy; the turn could not be saved in time');
}
