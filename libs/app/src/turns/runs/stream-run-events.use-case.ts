import { Inject, Injectable } from '@nestjs/common';
import { DomainError, validationError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { generationRunsRepository, type Db } from '@hearth/persistence';
import { DB, EVENT_BUS, LOGGER, type EventBus, type JsonLogger } from '@hearth/platform';
import { runEventsChannel, TERMINAL_RUN_EVENTS, type RunEvent } from './live-run';
import { requireRun } from './run-access';

/** The transport a reattached reader writes to (the SSE writer). */
export interface RunEventWriter {
  send(events: readonly RunEvent[]): boolean;
  fail(code: string, message: string): void;
  end(): void;
  onClose(listener: () => void): void;
}

export interface PreparedRunStream {
  start(writer: RunEventWriter): void;
  cancel(): void;
}

/** Rows read per query while replaying. */
const PAGE = 500;
/** Re-read even without a wake-up (a lost publish delays, never loses, an event). */
const SAFETY_POLL_MS = 1_000;

/**
 * `GET /runs/:id/events`: reattaches to a detached run from any replica (docs/decisions.md "Turns and
 * runs"). The run's events are rows in Postgres (written in batches by the generating process, the
 * last ones with the run's final state); the reader subscribes to the run's wake-up channel first, then
 * replays every event after `Last-Event-ID` and, on each wake-up (or safety poll), reads what follows
 * the last sequence it sent: so no gap and no repeat, whatever the cursor. It ends after `done` or
 * `error`. A run that was not started detached has no stored events: 409 `run_not_detached`.
 */
@Injectable()
export class StreamRunEventsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, runId: string, lastEventId: string | undefined): Promise<PreparedRunStream> {
    let cursor = 0;
    if (lastEventId !== undefined && lastEventId.trim() !== '') {
      if (!/^\d{1,9}$/.test(lastEventId.trim()))
        throw validationError('Last-Event-ID must be a non-negative integer', {
          fields: [{ field: 'Last-Event-ID', problems: ['must be a non-negative integer'] }],
        });
      cursor = Number(lastEventId.trim());
    }
    const { run } = await requireRun(this.access, this.db, actor, runId, 'project.read');
    if (!run.detached)
      throw new DomainError(
        'run_not_detached',
        409,
        'Only runs started with detach: true keep their events for reattachment',
        { run_id: run.id },
      );

    let closed = false;
    let unsubscribe: (() => Promise<void>) | null = null;
    let timer: NodeJS.Timeout | null = null;
    let reading = false;
    let again = false;
    let writer: RunEventWriter | null = null;
    const stop = () => {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      void unsubscribe?.().catch(() => undefined);
    };
    const read = async (): Promise<void> => {
      if (closed || !writer) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          let rows;
          do {
            rows = await generationRunsRepository.eventsAfter(this.db, run.id, cursor, PAGE);
            if (closed || rows.length === 0) break;
            const events = rows.map((r) => ({ sequence: r.seq, type: r.type, data: r.data }));
            cursor = events[events.length - 1].sequence;
            writer.send(events);
            if (events.some((e) => TERMINAL_RUN_EVENTS.has(e.type))) {
              stop();
              writer.end();
              return;
            }
          } while (rows.length === PAGE);
        } while (again && !closed);
      } catch (error) {
        this.logger.warn(
          { msg: 'run event replay failed', run_id: run.id, error: String(error) },
          'RunEvents',
        );
        stop();
        writer.fail('internal_error', 'The run event stream failed; reconnect with Last-Event-ID');
      } finally {
        reading = false;
      }
    };
    // Subscribe before the first read, so nothing stored in between is missed.
    unsubscribe = await this.bus.subscribe(runEventsChannel(run.id), () => void read());
    return {
      start: (w) => {
        writer = w;
        w.onClose(stop);
        timer = setInterval(() => void read(), SAFETY_POLL_MS);
        timer.unref();
        void read();
      },
      cancel: stop,
    };
  }
}
