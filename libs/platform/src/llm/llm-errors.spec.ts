import { toLlmError } from './llm-errors';

describe('toLlmError', () => {
  const context = { apiKey: 'sk-secret-key-123456', timedOut: false, aborted: false };
  const connectionError = (cause: unknown) =>
    Object.assign(new Error('Connection error.'), { name: 'APIConnectionError', cause });

  it('names the first error code of the cause chain after a generic connection error', () => {
    const fetchFailed = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
    });
    const error = toLlmError(connectionError(fetchFailed), context);
    expect(error.kind).toBe('network');
    expect(error.message).toBe('The upstream could not be reached: Connection error. (ECONNREFUSED)');
  });

  it('falls back to the innermost message, redacted, and adds nothing without a cause', () => {
    const error = toLlmError(connectionError(new Error('refused for sk-secret-key-123456')), context);
    expect(error.message).toBe('The upstream could not be reached: Connection error. (refused for ***)');
    expect(toLlmError(new Error('socket hang up'), context).message).toBe(
      'The upstream could not be reached: socket hang up',
    );
  });

  it('does not repeat a cause the message already holds', () => {
    const error = toLlmError(
      Object.assign(new Error('getaddrinfo ENOTFOUND example.invalid'), { cause: { code: 'ENOTFOUND' } }),
      context,
    );
    expect(error.message).toBe('The upstream could not be reached: getaddrinfo ENOTFOUND example.invalid');
  });
});
