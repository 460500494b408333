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
    return super.reply(response, renderEnvelope(body, request?.[ROUTE_ENVELOPE] ?? 'data'), statusCode);
  }
}
