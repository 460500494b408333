export interface StatementFlightOptions {
  /**
   * A statement in flight for longer than this no longer holds the next one back (one waiting on a
   * lock or for a pool connection must not stall every other caller of the process).
   */
  stallMs: number;
  /** Most statements in flight at once. */
  maxInFlight: number;
}

/** One statement in flight: when it started (callers may add what it writes). */
export interface StatementFlight {
  startedAt: number;
}

/**
 * The flight control of a batcher (group commit of derived-output creates, coalesced API-key
 * lookups): the next batch starts only when no statement in flight is fresh and there is room for
 * one more; when a fresh one holds the queue back, a timer calls `resume` as soon as it turns stale.
 * The end of every statement calls `resume` too.
 */
export class StatementFlights<Flight extends StatementFlight = StatementFlight> {
  readonly inFlight = new Set<Flight>();
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: () => StatementFlightOptions,
    private readonly resume: () => void,
  ) {}

  get size(): number {
    return this.inFlight.size;
  }

  /** Nothing in flight that is still fresh, and room for one more. */
  mayStart(): boolean {
    const { stallMs, maxInFlight } = this.options();
    if (this.inFlight.size >= maxInFlight) return false;
    const freshSince = Date.now() - stallMs;
    for (const flight of this.inFlight) if (flight.startedAt > freshSince) return false;
    return true;
  }

  /** Queued work waits for a fresh statement; if it stalls, the timer resumes the queue. */
  watchStall(): void {
    const { stallMs, maxInFlight } = this.options();
    // A full house resumes when a statement ends.
    if (this.stallTimer || this.inFlight.size >= maxInFlight) return;
    let newest = 0;
    for (const flight of this.inFlight) newest = Math.max(newest, flight.startedAt);
    const wait = Math.max(1, newest + stallMs - Date.now() + 1);
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.resume();
    }, wait);
    this.stallTimer.unref();
  }

  /** Tracks `statement` (which must not reject) until it ends, then resumes the queue. */
  start(flight: Flight, statement: Promise<void>): void {
    this.inFlight.add(flight);
    void statement.finally(() => {
      this.inFlight.delete(flight);
      this.resume();
    });
  }
}
