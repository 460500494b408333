import { Global, Module } from '@nestjs/common';
import type { Socket } from 'node:net';
import type { Request, Response } from 'express';
import { type AppConfig, CONFIG, METRICS, type Metrics } from '@hearth/platform';

/**
 * The process-wide budget of request-body bytes held while bodies are read
 * (`HTTP_BODY_BUFFER_BUDGET_BYTES`). Every reader that buffers a body (the JSON parser, the multipart
 * card upload) reserves before it holds bytes and releases once the body is parsed or the request is
 * gone; a reservation that does not fit is answered 503 `resource_busy`. The held total is the
 * `hearth_http_body_buffer_bytes` gauge.
 */
export class BodyBufferBudget {
  private held = 0;
  /** Bodies being read, checked for their pace once a second while there are any. */
  private readonly reading = new Set<BodyReader>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    readonly capacity: number,
    private readonly gauge?: { set(value: number): void },
    /** The minimum pace of a body (HTTP_BODY_MIN_BYTES_PER_SECOND after HTTP_BODY_READ_GRACE_MS); none when absent or 0. */
    readonly pace?: { minBytesPerSecond: number; graceMs: number },
  ) {}

  /** Bytes reserved right now, over all requests. */
  get heldBytes(): number {
    return this.held;
  }

  /** Reserves `bytes` if they fit under the capacity; false (and nothing reserved) if not. */
  tryReserve(bytes: number): boolean {
    if (this.held + bytes > this.capacity) return false;
    this.held += bytes;
    this.gauge?.set(this.held);
    return true;
  }

  release(bytes: number): void {
    if (bytes <= 0) return;
    this.held -= bytes;
    this.gauge?.set(this.held);
  }

  /** Watches a body's pace until `stop` (no-op without a pace). */
  watch(reader: BodyReader): () => void {
    if (!this.pace || this.pace.minBytesPerSecond <= 0) return () => undefined;
    this.reading.add(reader);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(Date.now()), PACE_CHECK_MS);
      this.sweeper.unref();
    }
    return () => {
      this.reading.delete(reader);
      if (this.reading.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    };
  }

  /** Answers 408 to every body behind the minimum pace at `now` (the sweeper's tick; tests call it). */
  sweep(now: number): void {
    const pace = this.pace;
    if (!pace) return;
    for (const reader of [...this.reading]) {
      const late = now - reader.startedAt - pace.graceMs;
      if (late > 0 && reader.bytesRead() < (late / 1000) * pace.minBytesPerSecond) reader.tooSlow();
    }
  }
}

/** A body being read, as the pace check sees it. */
export interface BodyReader {
  readonly startedAt: number;
  /** Body bytes (and any other bytes the connection received) since the body started. */
  bytesRead(): number;
  tooSlow(): void;
}

const PACE_CHECK_MS = 1_000;

export const BODY_BUFFER_BUDGET = Symbol('BODY_BUFFER_BUDGET');

/** One budget per API application, injectable everywhere (the multipart interceptor uses it). */
@Global()
@Module({
  providers: [
    {
      provide: BODY_BUFFER_BUDGET,
      useFactory: (config: AppConfig, metrics: Metrics) =>
        new BodyBufferBudget(config.bodyBufferBudgetBytes, metrics.httpBodyBufferBytes, {
          minBytesPerSecond: config.bodyMinBytesPerSecond,
          graceMs: config.bodyReadGraceMs,
        }),
      inject: [CONFIG, METRICS],
    },
  ],
  exports: [BODY_BUFFER_BUDGET],
})
export class BodyBufferBudgetModule {}

export const BODY_BUSY_MESSAGE = 'The server is reading too many request bodies at once; retry shortly';
export const BODY_TOO_SLOW_MESSAGE = 'The request body arrived too slowly';

/** What one request holds of the budget; `release` is idempotent and also runs when the response closes. */
export interface BodyHold {
  release(): void;
  /** True once the hold answered the request itself (413, 503 or 408 mid-stream); the reader's late callback must not answer again. */
  readonly answered: boolean;
}

export interface HoldOptions {
  /** The most bytes this reader buffers (its limit); a reservation never exceeds it. */
  maxBytes: number;
  /**
   * True for a reader that meters a body of unknown length (chunked, identity) chunk by chunk: each chunk
   * is reserved as it arrives; over `maxBytes` it answers 413 `payload_too_large`, over the budget 503
   * `resource_busy`, both with `Connection: close`, and stops reading. False: such a body reserves
   * `maxBytes` up front.
   */
  meter: boolean;
  /** True for a reader that inflates a compressed body: the declared length does not bound what it holds. */
  inflates: boolean;
}

/**
 * Reserves budget for the body of `req` before a reader reads it:
 * - a declared Content-Length (uncompressed) reserves that many bytes (at most `maxBytes`): one add now,
 *   one subtract at release, no per-chunk work;
 * - a compressed body, or a chunked one when not metered, reserves `maxBytes`;
 * - a chunked body when metered reserves chunk by chunk (see `HoldOptions.meter`).
 * A reservation larger than the whole budget is cut to the budget (it waits for an empty budget rather
 * than never fitting). Returns null when the up-front reservation does not fit: nothing is held, nothing
 * was read, and the caller answers 503 `resource_busy` with `Retry-After`.
 */
export function holdRequestBody(
  budget: BodyBufferBudget,
  req: Request,
  res: Response,
  options: HoldOptions,
): BodyHold | null {
  const encoding = req.headers['content-encoding'];
  const compressed = encoding !== undefined && encoding.toLowerCase() !== 'identity';
  const header = req.headers['content-length'];
  const declared = header === undefined ? NaN : Number(header);
  const metered = options.meter && !(options.inflates && compressed) && !Number.isFinite(declared);
  const upFront = metered
    ? 0
    : Math.min(
        Number.isFinite(declared) && !(options.inflates && compressed) ? declared : options.maxBytes,
        options.maxBytes,
        budget.capacity,
      );
  if (!budget.tryReserve(upFront)) return null;

  let reserved = upFront;
  let seen = 0;
  let released = false;
  let answered = false;

  const onData = (chunk: Buffer) => {
    if (released || answered) return;
    seen += chunk.length;
    if (seen > options.maxBytes) return refuse(413);
    if (!budget.tryReserve(chunk.length)) return refuse(503);
    reserved += chunk.length;
  };

  // Stops reading and answers with `Connection: close`; the rest of the body is never read. The bytes
  // read so far stay reserved until the connection is gone (the reader may hold them until then). The
  // reader (body-parser) calls back late, if at all; the caller drops that callback (`answered`).
  const refuse = (status: 413 | 503 | 408) => {
    answered = true;
    stopWatching();
    req.off('data', onData);
    req.pause();
    const socket = req.socket;
    res.off('close', release);
    if (socket.destroyed) return release();
    socket.once('close', release);
    if (res.headersSent) return void socket.destroy();
    closeWhenClientHasRead(socket);
    res.setHeader('Connection', 'close');
    if (status === 503) res.setHeader('Retry-After', '1');
    res.status(status).json(
      status === 413
        ? {
            error: {
              code: 'payload_too_large',
              message: 'The request body is larger than the server accepts',
            },
          }
        : status === 408
          ? { error: { code: 'request_timeout', message: BODY_TOO_SLOW_MESSAGE } }
          : { error: { code: 'resource_busy', message: BODY_BUSY_MESSAGE } },
    );
  };

  const release = () => {
    if (released) return;
    released = true;
    stopWatching();
    req.off('data', onData);
    res.off('close', release);
    req.socket?.off('close', release);
    budget.release(reserved);
    reserved = 0;
  };

  // Attached before the reader's own listener (same tick, so no chunk is missed): this one runs first
  // for each chunk.
  if (metered) req.on('data', onData);
  // The pace rule: read from the socket's byte count, so no listener sees the chunks. It ends when the
  // body has arrived (the handler may then take its time) or the hold is released.
  const socket = req.socket;
  const baseBytes = socket.bytesRead;
  const stopWatching = req.complete
    ? () => undefined
    : budget.watch({
        startedAt: Date.now(),
        bytesRead: () => socket.bytesRead - baseBytes,
        tooSlow: () => {
          if (!released && !answered && !req.complete) refuse(408);
        },
      });
  req.once('end', stopWatching);
  // The safety net: the response closes once it is sent or the connection is gone, whatever the reader
  // did. (Not the request's 'close': a request answered before its body was read, as on a refusal, is
  // let go of by Node without ever closing.)
  res.once('close', release);
  return {
    release,
    get answered() {
      return answered;
    },
  };
}

/** How long a refused connection stays half-open for the client to read the answer. */
const LINGER_MS = 2_000;

/**
 * A lingering close for a connection answered before its request body was read. Node ends a
 * `Connection: close` response with `socket.destroySoon()`, which closes the socket as soon as the answer
 * is written; with unread body bytes queued that close is a TCP reset, and a client still sending may
 * lose the answer (EPIPE instead of the 413/503 for 8 of 100 refused parallel uploads in a local run).
 * This socket instead sends FIN after the answer and is destroyed when the client closes, or after
 * LINGER_MS. If Node stops calling destroySoon, its own immediate close applies (the old behaviour).
 */
function closeWhenClientHasRead(socket: Socket): void {
  (socket as Socket & { destroySoon?: () => void }).destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
