import { Redis } from 'ioredis';
import type { BusListener, EventBus } from './event-bus';

interface PendingPublish {
  channel: string;
  message: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Redis pub/sub with one subscriber connection per process: each channel is subscribed once and
 * fanned out in process (PSUBSCRIBE is avoided; see performance-and-reliability.md A3).
 */
export class RedisEventBus implements EventBus {
  readonly kind = 'redis' as const;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channels = new Map<string, Set<BusListener>>();
  private readonly resyncListeners = new Set<() => void>();
  private lostConnection = false;
  /** Publishes of the running microtask queue, sent together when it drains (see publish). */
  private pending: PendingPublish[] | null = null;
  private closed = false;

  constructor(
    url: string,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    const options = { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false };
    this.publisher = new Redis(url, { ...options, connectionName: 'hearth-pub' });
    this.subscriber = new Redis(url, { ...options, connectionName: 'hearth-sub' });
    this.publisher.on('error', (e) => this.onError(e));
    this.subscriber.on('error', (e) => this.onError(e));
    this.subscriber.on('message', (channel: string, message: string) => {
      for (const listener of [...(this.channels.get(channel) ?? [])]) listener(message);
    });
    this.subscriber.on('close', () => {
      if (!this.closed) this.lostConnection = true;
    });
    // ioredis re-subscribes its channels on reconnect; what was published meanwhile is gone.
    this.subscriber.on('ready', () => {
      if (!this.lostConnection) return;
      this.lostConnection = false;
      for (const listener of [...this.resyncListeners]) listener();
    });
  }

  /**
   * PUBLISH, coalesced: the publishes made in one run of the microtask queue (the wake-ups of one
   * group-committed batch, whose requests resume together) are sent in one pipeline, i.e. one write
   * and one round trip, still as one PUBLISH each and in call order. They leave on the microtask
   * after the caller's, before any I/O. Resolves when Redis has acknowledged this publish.
   */
  publish(channel: string, message: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (!this.pending) {
        this.pending = [];
        queueMicrotask(() => this.flush());
      }
      this.pending.push({ channel, message, resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.pending ?? [];
    this.pending = null;
    if (batch.length === 1) {
      const [only] = batch;
      this.publisher.publish(only.channel, only.message).then(() => only.resolve(), only.reject);
      return;
    }
    const pipeline = this.publisher.pipeline();
    for (const p of batch) pipeline.publish(p.channel, p.message);
    pipeline.exec().then(
      (results) =>
        batch.forEach((p, i) => {
          const error = results?.[i]?.[0];
          if (error) p.reject(error);
          else p.resolve();
        }),
      (error: unknown) => batch.forEach((p) => p.reject(error)),
    );
  }

  async subscribe(channel: string, listener: BusListener): Promise<() => Promise<void>> {
    let set = this.channels.get(channel);
    if (!set) {
      set = new Set();
      this.channels.set(channel, set);
      await this.subscriber.subscribe(channel);
    }
    set.add(listener);
    return async () => {
      const current = this.channels.get(channel);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) {
        this.channels.delete(channel);
        if (!this.closed) await this.subscriber.unsubscribe(channel).catch((e) => this.onError(e));
      }
    };
  }

  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  async isHealthy(): Promise<boolean> {
    try {
      return (await this.publisher.ping()) === 'PONG' && this.subscriber.status === 'ready';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    await Promise.allSettled([this.publisher.quit(), this.subscriber.quit()]);
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
