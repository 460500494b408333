import { SetMetadata, StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';

export const ENVELOPE = 'hearth:envelope';
export type EnvelopeStyle = 'data' | 'bare';

/**
 * Declares a controller's envelope (ARCHITECTURE.md rule 6): spec 2 and 3 routes answer `{data}`
 * (lists `{data, meta}`); spec 1 routes answer the object itself. `data` is the default.
 */
export const Envelope = (style: EnvelopeStyle) => SetMetadata(ENVELOPE, style);

/** A list answer for `{data}` controllers: rendered as `{data: items, meta}`. */
export class DataList<T, M extends object = Record<string, unknown>> {
  constructor(
    readonly items: T[],
    readonly meta: M,
  ) {}
}

/** A value a `{data}` controller sends as is (file downloads, custom shapes). */
export class Raw<T> {
  constructor(readonly value: T) {}
}

/** Where the auth guard records the handler's envelope for the reply (see `EnvelopeExpressAdapter`). */
export const ROUTE_ENVELOPE = Symbol('hearth:route-envelope');

export interface EnvelopedRequest {
  [ROUTE_ENVELOPE]?: EnvelopeStyle;
}

/** What a handler's return value is sent as, under its controller's envelope. */
export function renderEnvelope(value: unknown, style: EnvelopeStyle): unknown {
  if (value === undefined) return undefined;
  if (value instanceof Raw) return value.value;
  if (style === 'bare') return value;
  if (value instanceof DataList) return { data: value.items, meta: value.meta };
  return { data: value };
}

/**
 * Applies the envelope where Nest hands a handler's result to Express. This replaces a global
 * interceptor: any interceptor makes Nest run every request through an rxjs pipeline (defer,
 * mergeAll, a ReplaySubject, lastValueFrom), which cost about a fifth of the API's CPU per request
 * on `GET /projects/:id` (benchmark P1). The style comes from the `@Envelope` metadata of the
 * handler, which the global auth guard (it runs for every route) resolves once per handler and
 * records on the request. Error bodies never pass here (the exception filter writes them itself),
 * and neither is a stream Nest sends for a handler (a `StreamableFile`), which goes out as it is.
 */
export class EnvelopeExpressAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof StreamableFile) return super.reply(response, body, statusCode);
    const request = response.req as (Response['req'] & EnvelopedRequest) | undefined;
    const rendered = renderEnvelope(body, request?.[ROUTE_ENVELOPE] ?? 'data');
    if (statusCode !== undefined && statusCode !== null) response.status(statusCode);
    if (sendJson(response, rendered)) return response;
    return super.reply(response, rendered, undefined);
  }
}

/**
 * What `res.json(body)` sends, written directly when nothing of Express's generic path applies:
 * the same bytes and headers (`Content-Type: application/json; charset=utf-8`, `Content-Length`),
 * without its per-reply settings reads, content-type parsing and re-formatting (`setCharset`) and
 * freshness check. Anything else returns false and goes through Express as before: a body that is
 * not a plain JSON object or array (strings, numbers, buffers, errors, null), ETags or JSON
 * settings enabled on the app, headers a handler set itself (Content-Type, Transfer-Encoding,
 * ETag, Last-Modified), a HEAD request, conditional request headers, or a status without a body
 * (204, 205, 304).
 */
function sendJson(response: Response, body: unknown): boolean {
  if (typeof body !== 'object' || body === null || body instanceof Error || ArrayBuffer.isView(body))
    return false;
  const request = response.req;
  if (!request || request.method === 'HEAD') return false;
  const requestHeaders = request.headers;
  if (requestHeaders['if-none-match'] !== undefined || requestHeaders['if-modified-since'] !== undefined)
    return false;
  const status = response.statusCode;
  if (status === 204 || status === 205 || status === 304) return false;
  const settings = (response.app as { settings?: Record<string, unknown> } | undefined)?.settings;
  if (
    !settings ||
    settings['etag fn'] ||
    settings['json replacer'] ||
    settings['json spaces'] ||
    settings['json escape']
  )
    return false;
  if (
    response.hasHeader('content-type') ||
    response.hasHeader('transfer-encoding') ||
    response.hasHeader('etag') ||
    response.hasHeader('last-modified')
  )
    return false;
  const json: unknown = JSON.stringify(body);
  if (typeof json !== 'string') return false;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(json));
  response.end(json, 'utf8');
  return true;
}
