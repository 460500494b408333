import { findSsrfBlocked } from '../net-guard/ssrf-error';
import { LlmError } from './llm.types';

/** Removes the key (and anything that looks like one) from a text that may reach logs or clients. */
export function redactSecrets(text: string, secrets: Array<string | null | undefined>): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('***');
  return out
    .replace(/(sk|key|api[-_]?key|bearer)[-_ =:]*[A-Za-z0-9._-]{12,}/gi, '$1 ***')
    .replace(/([?&]key=)[^&\s]+/gi, '$1***');
}

/**
 * Turns whatever an SDK threw into an LlmError: aborts (client or timeout), HTTP statuses, network and
 * parse failures. `timedOut` says whether the abort came from the timeout.
 */
export function toLlmError(
  error: unknown,
  context: { apiKey: string | null; timedOut: boolean; aborted: boolean },
): LlmError {
  if (error instanceof LlmError) return error;
  // The network guard refused the connection: a `network` failure whose cause is the 400 `ssrf_blocked`
  // DomainError (callers that answer it find it with `findSsrfBlocked`).
  const ssrf = findSsrfBlocked(error);
  if (ssrf) return Object.assign(new LlmError('network', ssrf.message), { cause: ssrf });
  const e = error as { name?: string; status?: number; message?: string; code?: string; cause?: unknown };
  const message = redactSecrets(String(e?.message ?? error), [context.apiKey]);
  if (context.timedOut) return new LlmError('timeout', 'The model did not answer in time');
  if (context.aborted || e?.name === 'AbortError' || e?.name === 'APIUserAbortError')
    return new LlmError('aborted', 'The generation was cancelled');
  if (e?.name === 'APIConnectionTimeoutError')
    return new LlmError('timeout', 'The model did not answer in time');
  if (typeof e?.status === 'number')
    return new LlmError('upstream_status', `Upstream answered ${e.status}: ${message}`, e.status);
  if (e?.name === 'SyntaxError' || /JSON|parse|Unexpected token/i.test(message))
    return new LlmError('invalid_response', `The upstream response could not be read: ${message}`);
  const cause = redactSecrets(causeOf(e?.cause), [context.apiKey]);
  return new LlmError(
    'network',
    `The upstream could not be reached: ${message}${cause && !message.includes(cause) ? ` (${cause})` : ''}`,
  );
}

/**
 * What lies under an SDK's generic "Connection error.": the first error code (`ECONNREFUSED`,
 * `ENOTFOUND`, `UND_ERR_SOCKET`, ...) of the cause chain, else the innermost message, so a 502 says why.
 */
function causeOf(cause: unknown): string {
  let innermost = '';
  for (
    let depth = 0, c = cause as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
    c && depth < 5;
    depth++
  ) {
    if (typeof c.code === 'string' && c.code) return c.code;
    if (typeof c.message === 'string' && c.message) innermost = c.message;
    c = c.cause as typeof c;
  }
  return innermost.slice(0, 200);
}

/** An abort signal that fires on the caller's signal or after `timeoutMs`, and tells which happened. */
export function callSignal(signal: AbortSignal | undefined, timeoutMs: number | null | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs && timeoutMs > 0) {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, timeoutMs);
  }
  const onAbort = () => controller.abort(signal?.reason);
  if (signal) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    get aborted() {
      return controller.signal.aborted;
    },
    dispose() {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}
