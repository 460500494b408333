/**
 * The one error type of Hearth. Use cases and rules throw it; the HTTP filter renders it as
 * `{error: {code, message, details?}}` with `status`.
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (code = 'not_found', message = 'Resource not found') =>
  new DomainError(code, 404, message);

export const validationError = (message: string, details?: unknown) =>
  new DomainError('validation_error', 400, message, details);
