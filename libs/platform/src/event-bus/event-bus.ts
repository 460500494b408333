/**
 * Wake-up signals between processes (ARCHITECTURE.md "Project events"). A message only says
 * "something new was committed"; subscribers read the truth from Postgres, so a lost message
 * delays delivery but never loses an event.
 */
export type BusListener = (message: string) => void;

export interface EventBus {
  readonly kind: 'redis' | 'in-process';
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function unsubscribes this listener. */
  subscribe(channel: string, listener: BusListener): Promise<() => Promise<void>>;
  /**
   * Called after the bus lost its connection and got it back: messages may have been missed in
   * between, so subscribers should catch up from the database.
   */
  onResync(listener: () => void): () => void;
  /** True while publishes and subscriptions can reach the other processes. */
  isHealthy(): Promise<boolean>;
  close(): Promise<void>;
}
