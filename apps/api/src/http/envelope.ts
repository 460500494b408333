import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, type Observable } from 'rxjs';

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

@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const style =
      this.reflector.getAllAndOverride<EnvelopeStyle>(ENVELOPE, [context.getHandler(), context.getClass()]) ??
      'data';
    return next.handle().pipe(
      map((value: unknown) => {
        if (value === undefined) return undefined;
        if (value instanceof Raw) return value.value;
        if (style === 'bare') return value;
        if (value instanceof DataList) return { data: value.items, meta: value.meta };
        return { data: value };
      }),
    );
  }
}
