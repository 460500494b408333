import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { JSON_MAX_DEPTH, jsonNestedDeeperThan } from '@hearth/domain';
import { type JsonLogger, type Metrics, requestContext } from '@hearth/platform';
import { BODY_BUSY_MESSAGE, type BodyBufferBudget, holdRequestBody } from './body-budget';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Express-level pieces that run before Nest's router: request ids (`x-request-id`, echoed back and
 * on every log line), the access log and latency metric, and the JSON body parser whose failures
 * are rendered in Hearth's error shape (malformed JSON 400 `validation_error`, too large 413).
 */
export function requestIdAndAccessLog(logger: JsonLogger, metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID()}`;
    (req as Request & { requestId: string }).requestId = requestId;
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      metrics.httpDuration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      const path = req.path;
      if (path.startsWith('/health') || path === '/metrics') return;
      // The request id as a field (the same line as inside the request's context, one context switch less).
      logger.info({
        msg: 'request',
        method: req.method,
        path,
        route,
        status: res.statusCode,
        duration_ms: Math.round(seconds * 1000 * 100) / 100,
        request_id: requestId,
      });
    });
    requestContext.run({ requestId }, next);
  };
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * The JSON body parser (HTTP_BODY_LIMIT_BYTES), plus three guards:
 * - a declared Content-Length over the limit is refused at once. body-parser would refuse it without
 *   buffering too, but only answer once the whole declared body had arrived (a slow client waited, and
 *   the server read it all); the unread rest is discarded by Node as it arrives.
 * - the body buffer budget (HTTP_BODY_BUFFER_BUDGET_BYTES, see body-budget.ts): a declared length is
 *   reserved before reading (503 `resource_busy` with Retry-After at once if it does not fit); a chunked
 *   body is reserved chunk by chunk, and answered 413 over the limit or 503 over the budget as soon as a
 *   chunk does not fit, without reading the rest; a compressed body reserves the limit. Released once
 *   the body is parsed (or the request is gone).
 * - the parsed body may nest at most JSON_MAX_DEPTH (256) levels, else 400 `validation_error` before any
 *   route sees it (class-transformer and the rest recurse: 100,000 levels overflowed the stack, a 500).
 */
export function jsonBodyParser(limitBytes: number, budget: BodyBufferBudget) {
  const parse = express.json({ limit: limitBytes, type: JSON_TYPES });
  return (req: Request, res: Response, next: NextFunction) => {
    // No body, or not JSON: body-parser skips it without reading, so nothing is reserved.
    if (!req.is(JSON_TYPES)) return parse(req, res, next);
    if (declaredLength(req) > limitBytes) {
      return next({ type: 'entity.too.large', status: 413, message: 'request entity too large' });
    }
    const hold = holdRequestBody(budget, req, res, { maxBytes: limitBytes, meter: true, inflates: true });
    if (!hold) return next({ type: 'body.budget.busy', status: 503, message: BODY_BUSY_MESSAGE });
    parse(req, res, (err?: unknown) => {
      hold.release();
      // Answered mid-stream (413 or 503): body-parser's late error is about the aborted rest.
      if (hold.answered) return;
      if (err) return next(err);
      if (jsonNestedDeeperThan(req.body, JSON_MAX_DEPTH)) {
        return next({ type: 'entity.too.deep', status: 400, message: 'JSON body nested too deep' });
      }
      next();
    });
  };
}

/** Content-Length of an uncompressed body (a compressed one is limited after inflating, as body-parser does). */
function declaredLength(req: Request): number {
  const header = req.headers['content-length'];
  const encoding = req.headers['content-encoding'];
  if (header === undefined || (encoding !== undefined && encoding.toLowerCase() !== 'identity')) return 0;
  const length = Number(header);
  return Number.isFinite(length) ? length : 0;
}

interface BodyParserError {
  type?: string;
  status?: number;
  message?: string;
}

export function bodyParserErrorHandler() {
  return (err: BodyParserError, _req: Request, res: Response, next: NextFunction) => {
    if (!err || typeof err !== 'object' || !err.type) return next(err);
    if (err.type === 'entity.too.large') {
      return res.status(413).json({
        error: { code: 'payload_too_large', message: 'The request body is larger than the server accepts' },
      });
    }
    if (err.type === 'body.budget.busy') {
      res.setHeader('Retry-After', '1');
      return res.status(503).json({ error: { code: 'resource_busy', message: BODY_BUSY_MESSAGE } });
    }
    if (err.type === 'entity.too.deep') {
      return res.status(400).json({
        error: {
          code: 'validation_error',
          message: `The JSON body is nested deeper than ${JSON_MAX_DEPTH} levels`,
          details: { max_depth: JSON_MAX_DEPTH },
        },
      });
    }
    if (err.type === 'entity.parse.failed') {
      return res.status(400).json({ error: { code: 'validation_error', message: 'Malformed JSON body' } });
    }
    const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 400;
    return res
      .status(status)
      .json({ error: { code: 'validation_error', message: err.message ?? 'Bad body' } });
  };
}
