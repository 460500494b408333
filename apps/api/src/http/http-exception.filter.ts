import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, newId } from '@hearth/domain';
import { classifyDatabaseError } from '@hearth/persistence';
import { LOGGER, type JsonLogger } from '@hearth/platform';

const STATUS_CODES: Record<number, string> = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown; error_id?: string };
}

/**
 * The one exception filter: every failure leaves as `{error: {code, message, details?}}`.
 * DomainErrors keep their code; framework errors get the code of their status; anything else is a
 * 500 `internal_error` whose id is logged with the stack.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: JsonLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const { status, body } = this.render(exception);
    if (response.headersSent) {
      // A streaming route already answered; it reports its own errors in-band.
      response.end();
      return;
    }
    response.status(status).json(body);
  }

  render(exception: unknown): { status: number; body: ErrorBody } {
    if (exception instanceof DomainError) {
      const error: ErrorBody['error'] = { code: exception.code, message: exception.message };
      if (exception.details !== undefined) error.details = exception.details;
      return { status: exception.status, body: { error } };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const raw =
        typeof response === 'object' && response !== null ? (response as Record<string, unknown>) : {};
      const code = typeof raw.code === 'string' ? raw.code : (STATUS_CODES[status] ?? `http_${status}`);
      const message = Array.isArray(raw.message)
        ? raw.message.join('; ')
        : typeof raw.message === 'string'
          ? raw.message
          : exception.message;
      const error: ErrorBody['error'] = { code, message };
      if (raw.details !== undefined) error.details = raw.details;
      return { status, body: { error } };
    }
    const databaseError = classifyDatabaseError(exception);
    if (databaseError === 'invalid_text') {
      return {
        status: 400,
        body: {
          error: {
            code: 'validation_error',
            message: 'Text and JSON values must not contain NUL characters or unpaired UTF-16 surrogates',
          },
        },
      };
    }
    if (databaseError === 'out_of_range') {
      // Bad input in practice (an offset or a number past its integer column); logged in case it is not.
      this.logger.warn({ msg: 'number out of range', error: String(exception) }, 'HttpExceptionFilter');
      return {
        status: 400,
        body: {
          error: {
            code: 'validation_error',
            message: 'A number in the request is out of the range this value can hold',
          },
        },
      };
    }
    if (databaseError === 'account_gone') {
      // A write raced the delete of its account (the creates that can lock the account do so first).
      return {
        status: 401,
        body: { error: { code: 'unauthorized', message: 'The account of this API key no longer exists' } },
      };
    }
    if (databaseError === 'busy') {
      return {
        status: 503,
        body: { error: { code: 'resource_busy', message: 'The resource is busy; retry shortly' } },
      };
    }
    if (databaseError === 'unavailable') {
      this.logger.warn({ msg: 'database unavailable', error: String(exception) }, 'HttpExceptionFilter');
      return {
        status: 503,
        body: { error: { code: 'resource_busy', message: 'The database is unavailable; retry shortly' } },
      };
    }
    const errorId = newId('err');
    this.logger.error(
      { msg: 'unhandled error', error_id: errorId, error: String(exception) },
      exception instanceof Error ? exception.stack : undefined,
      'HttpExceptionFilter',
    );
    return {
      status: 500,
      body: {
        error: { code: 'internal_error', message: `Internal error (id ${errorId})`, error_id: errorId },
      },
    };
  }
}
