import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { generationRunsRepository, type Db, type GenerationRunRow } from '@hearth/persistence';
import { DB, EVENT_BUS, LOGGER, type EventBus, type JsonLogger } from '@hearth/platform';
import { LiveRun, RUN_CANCEL_CHANNEL } from './live-run';

/** A running run's lease; the owning process renews it every `LEASE_RENEW_MS`. */
export const RUN_LEASE_MS = 30_000;
const LEASE_RENEW_MS = 10_000;
/** How long shutdown waits for running generations to record their cancellation. */
const SHUTDOWN_WAIT_MS = 5_000;

/**
 * The runs this process is generating: cancel requests from any replica (one bus subscription per
 * process), lease renewal, and cancellation at shutdown (docs/decisions.md "Turns and runs").
 */
@Injectable()
export class RunRegistry implements OnModuleInit, OnModuleDestroy {
  private readonly runs = new Map<string, LiveRun>();
  private unsubscribe: (() => Promise<void>) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(RUN_CANCEL_CHANNEL, (runId) =>
      this.runs.get(runId)?.cancel('cancel_requested'),
    );
    this.heartbeat = setInterval(() => void this.renewLeases(), LEASE_RENEW_MS);
    this.heartbeat.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    const running = [...this.runs.values()];
    for (const run of running) run.cancel('shutdown');
    let wait: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(running.map((r) => r.finished)),
      new Promise((resolve) => (wait = setTimeout(resolve, SHUTDOWN_WAIT_MS).unref())),
    ]);
    clearTimeout(wait);
    await this.unsubscribe?.().catch(() => undefined);
  }

  create(row: GenerationRunRow): LiveRun {
    const run = new LiveRun(row, { db: this.db, bus: this.bus, logger: this.logger });
    this.runs.set(run.id, run);
    void run.finished.then(() => this.runs.delete(run.id));
    return run;
  }

  get(runId: string): LiveRun | undefined {
    return this.runs.get(runId);
  }

  /** Whether this process generates on the branch now (a live run of it has not finished). */
  generatesOn(branchId: string): boolean {
    for (const run of this.runs.values()) if (run.row.branch_id === branchId) return true;
    return false;
  }

  /** Cancels a run wherever it runs: here at once, elsewhere through the bus. */
  async requestCancel(runId: string): Promise<void> {
    const local = this.runs.get(runId);
    if (local) return local.cancel('cancel_requested');
    await this.bus.publish(RUN_CANCEL_CHANNEL, runId);
  }

  private async renewLeases(): Promise<void> {
    try {
      await generationRunsRepository.renewLeases(this.db, [...this.runs.keys()], Date.now() + RUN_LEASE_MS);
    } catch (error) {
      this.logger.warn({ msg: 'run lease renewal failed', error: String(error) }, 'RunRegistry');
    }
  }
}
