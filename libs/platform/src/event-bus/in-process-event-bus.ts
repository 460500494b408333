import type { BusListener, EventBus } from './event-bus';

/** The embedded-mode bus: one process, so fan-out is a map of listeners. */
export class InProcessEventBus implements EventBus {
  readonly kind = 'in-process' as const;
  private readonly channels = new Map<string, Set<BusListener>>();

  async publish(channel: string, message: string): Promise<void> {
    for (const listener of [...(this.channels.get(channel) ?? [])]) {
      queueMicrotask(() => listener(message));
    }
  }

  async subscribe(channel: string, listener: BusListener): Promise<() => Promise<void>> {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(listener);
    return async () => {
      set.delete(listener);
      if (set.size === 0) this.channels.delete(channel);
    };
  }

  onResync(): () => void {
    return () => undefined;
  }

  async isHealthy(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.channels.clear();
  }
}
