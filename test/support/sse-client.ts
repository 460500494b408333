import http from 'node:http';

/** One SSE block as received. */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

export interface SseClientOptions {
  headers?: Record<string, string>;
  /** Called for every event block (not for comments). */
  onMessage?: (message: SseMessage) => void;
}

/**
 * A raw `http.get` SSE reader (performance-and-reliability.md C11): parses `id:`/`event:`/`data:`
 * blocks and comments, records the `retry:` value, and lets the test drop the socket whenever it
 * wants, so reconnection is controlled by the test, not by a library.
 */
export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  retry: number | null = null;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** The body of a non-200 answer. */
  body = '';
  ended = false;
  private request: http.ClientRequest | null = null;
  private response: http.IncomingMessage | null = null;
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(private readonly options: SseClientOptions) {}

  /** Connects and resolves once the response headers arrived (any status). */
  static connect(url: string, options: SseClientOptions = {}): Promise<SseClient> {
    const client = new SseClient(options);
    return client.open(url).then(() => client);
  }

  private open(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        url,
        { headers: { accept: 'text/event-stream', ...this.options.headers } },
        (res) => {
          this.response = res;
          this.status = res.statusCode ?? 0;
          this.headers = res.headers;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => this.onChunk(chunk));
          res.on('end', () => this.finish());
          res.on('close', () => this.finish());
          res.on('error', () => this.finish());
          resolve();
        },
      );
      req.on('error', (error) => {
        this.finish();
        reject(error);
      });
      this.request = req;
    });
  }

  /** Events that carry data (every block except the `retry:`-only one). */
  get events(): SseMessage[] {
    return this.messages;
  }

  get lastId(): string | null {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const id = this.messages[i].id;
      if (id !== null) return id;
    }
    return null;
  }

  /** Stops reading (a slow client): the server's socket buffer fills up. */
  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  /** Drops the socket abruptly, as a network failure would. */
  drop(): void {
    this.request?.destroy();
    this.finish();
  }

  close(): void {
    this.drop();
  }

  /** Waits until the predicate holds (checked on every block, comment and end), or times out. */
  async waitFor(
    predicate: (client: SseClient) => boolean,
    timeoutMs = 10_000,
    what = 'condition',
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `SSE client: timed out waiting for ${what} (status ${this.status}, ${this.messages.length} events, ` +
            `last id ${this.lastId}, ended ${this.ended})`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForEvents(count: number, timeoutMs = 10_000): Promise<void> {
    return this.waitFor((c) => c.messages.length >= count, timeoutMs, `${count} events`);
  }

  waitForEnd(timeoutMs = 10_000): Promise<void> {
    return this.waitFor((c) => c.ended, timeoutMs, 'the end of the stream');
  }

  private onChunk(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      this.notify();
      return;
    }
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    let index: number;
    while ((index = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, index);
      this.buffer = this.buffer.slice(index + 2);
      this.parseBlock(block);
    }
    this.notify();
  }

  private parseBlock(block: string): void {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    let hasField = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'retry') {
        this.retry = Number(value);
        continue;
      }
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else continue;
      hasField = true;
    }
    if (!hasField) return;
    const message = { id, event, data: data.join('\n') };
    this.messages.push(message);
    this.options.onMessage?.(message);
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** The sequences of the received events, in arrival order. */
export const sequencesOf = (messages: SseMessage[]) =>
  messages.filter((m) => m.id !== null && m.event !== 'error').map((m) => Number(m.id));
