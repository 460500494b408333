import type { Request, Response } from 'express';

/** The `retry:` sent first: how long a browser waits before reconnecting, in ms. */
export const SSE_RETRY_MS = 2000;

export interface SseEvent {
  sequence: number;
  type: string;
  /** Serialised once for every client that receives it. */
  data: string;
}

/** The SSE block is built once per event object, however many clients it is written to. */
const frames = new WeakMap<SseEvent, string>();
/** Likewise the chunk of a run of events (a catch-up page, or a shared batch's selection). */
const chunks = new WeakMap<readonly SseEvent[], string>();

function frameOf(event: SseEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = `id: ${event.sequence}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

function chunkOf(events: readonly SseEvent[]): string {
  if (events.length === 1) return frameOf(events[0]);
  let chunk = chunks.get(events);
  if (chunk === undefined) {
    // Catch-up pages are one stream's own: build their frames without caching each one.
    chunk = '';
    for (const event of events)
      chunk += `id: ${event.sequence}\nevent: ${event.type}\ndata: ${event.data}\n\n`;
    chunks.set(events, chunk);
  }
  return chunk;
}

/**
 * Turns an Express response into a server-sent event stream: the headers (no caching, no proxy
 * buffering, no compression), a `retry:` line, a `: heartbeat` comment every `heartbeatMs`, events as
 * `id:`/`event:`/`data:` blocks written straight to the socket, and `event: error` before ending on
 * an internal failure.
 */
export class SseWriter {
  private readonly heartbeat: NodeJS.Timeout;
  private ended = false;
  /** With `coalesce`: what was written since the last flush, sent as one socket write by a microtask. */
  private pending = '';
  private flushQueued = false;
  private readonly coalesce: boolean;

  /**
   * `coalesce`: events written in one synchronous run (a turn's `start` and `run`; `run`, `done` and
   * the end) leave in one socket write from the microtask queued by the first of them, the headers
   * with it, which delays no event (each model chunk arrives on its own) and saves the writes and the
   * client's reads in between. The streams that wait for `drain` (the Project event stream) write at
   * once.
   */
  constructor(
    private readonly req: Request,
    private readonly res: Response,
    options: { heartbeatMs: number; retryMs?: number; coalesce?: boolean },
  ) {
    this.coalesce = options.coalesce === true;
    const socket = req.socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    socket.setTimeout(0);
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    if (!this.coalesce) res.flushHeaders();
    this.write(`retry: ${options.retryMs ?? SSE_RETRY_MS}\n\n`);
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), options.heartbeatMs);
    this.heartbeat.unref();
    res.on('close', () => this.stop());
  }

  /**
   * Writes consecutive events with ONE `write`; false when the socket buffer is full (wait for
   * `onDrain`). The array must not change afterwards: its chunk is cached for the other clients.
   */
  send(events: readonly SseEvent[]): boolean {
    if (events.length === 0) return true;
    return this.write(chunkOf(events));
  }

  fail(code: string, message: string): void {
    if (this.ended) return;
    this.write(`event: error\ndata: ${JSON.stringify({ code, message })}\n\n`);
    this.end();
  }

  end(): void {
    if (this.ended) return;
    const last = this.pending;
    this.pending = '';
    this.stop();
    if (last && !this.res.destroyed) this.res.end(last);
    else this.res.end();
  }

  onDrain(listener: () => void): void {
    this.res.on('drain', listener);
  }

  /** Runs the listener when the client goes away (or at once if it already has). */
  onClose(listener: () => void): void {
    if (this.res.destroyed || this.res.writableFinished || this.req.socket.destroyed) {
      queueMicrotask(listener);
      return;
    }
    this.res.on('close', listener);
  }

  private write(chunk: string): boolean {
    if (this.ended || this.res.destroyed) return true;
    if (!this.coalesce) return this.writeNow(chunk);
    this.pending += chunk;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
    return !this.res.writableNeedDrain;
  }

  private flush(): void {
    this.flushQueued = false;
    const chunk = this.pending;
    this.pending = '';
    if (!chunk || this.ended || this.res.destroyed) return;
    this.writeNow(chunk);
  }

  /**
   * Node corks the socket for a chunked write and uncorks it on the next tick, i.e. after every
   * microtask queued so far (a turn's commit work, when the last chunk and the stream's end arrive
   * together): uncork at once so the event leaves now. The later uncork then finds nothing corked.
   */
  private writeNow(chunk: string): boolean {
    const ok = this.res.write(chunk);
    const socket = this.res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
    return ok;
  }

  private stop(): void {
    this.ended = true;
    clearInterval(this.heartbeat);
  }
}
