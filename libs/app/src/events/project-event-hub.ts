import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { type Db, projectEventsRepository } from '@hearth/persistence';
import {
  type AppConfig,
  CONFIG,
  DB,
  EVENT_BUS,
  type EventBus,
  type JsonLogger,
  LOGGER,
  METRICS,
  type Metrics,
} from '@hearth/platform';
import type { Actor } from '@hearth/permissions';
import { ProjectEventAccessCheck, STREAM_ACCESS_REVOKED } from './project-event-access-check';
import type { ProjectEventFilter } from './project-event-filter';
import { streamedEventOf } from './project-event-item';
import { projectEventsChannel } from './project-event-writer';
import { type EventBatch, type EventStreamSink, ProjectEventStream } from './project-event-stream';

/** Rows per shared read of a Project's new events. */
const SHARED_READ_PAGE = 1000;
/** The event whose commit removes a member: the streams of its subject re-check their access. */
const MEMBER_REMOVED = 'project_member.removed';
const STREAM_METRIC_LABEL = { stream: 'project_events' } as const;

/**
 * The live side of one Project in this process: ONE bus subscription shared by all its streams, and
 * ONE read in flight of the events after `head`, whose result is handed to every stream as a batch.
 */
class ProjectChannel {
  readonly streams = new Set<ProjectEventStream>();
  head = 0;
  subscribed = false;
  private reading = false;
  private dirty = false;
  private unsubscribe: (() => Promise<void>) | null = null;
  private disposed = false;

  constructor(
    readonly projectId: string,
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly logger: JsonLogger,
    /** Queues streams for the hub's access re-check. */
    private readonly recheck: (streams: ProjectEventStream[]) => void,
  ) {}

  /** Subscribes BEFORE reading the head, so nothing committed in between goes unnoticed. */
  async open(): Promise<void> {
    await this.subscribe();
    this.head = await projectEventsRepository.lastSequence(this.db, this.projectId);
  }

  /** A failed subscription is not fatal: the safety poll delivers, and retries the subscription. */
  async subscribe(): Promise<void> {
    if (this.subscribed || this.disposed) return;
    try {
      const unsubscribe = await this.bus.subscribe(projectEventsChannel(this.projectId), () => this.wake());
      if (this.disposed) {
        await unsubscribe();
        return;
      }
      this.unsubscribe = unsubscribe;
      this.subscribed = true;
    } catch (error) {
      this.logger.warn(
        {
          msg: 'event wake-up subscription failed; polling',
          project_id: this.projectId,
          error: String(error),
        },
        'ProjectEventHub',
      );
    }
  }

  /** Coalesces wake-ups: one read in flight, and one more if woken meanwhile. */
  wake(): void {
    if (this.disposed) return;
    if (this.reading) {
      this.dirty = true;
      return;
    }
    void this.readNew();
  }

  private async readNew(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.dirty = false;
        for (;;) {
          const rows = await projectEventsRepository.listStreamAfter(this.db, {
            projectId: this.projectId,
            after: this.head,
            visibilities: ['project', 'owner'],
            limit: SHARED_READ_PAGE,
          });
          if (this.disposed || rows.length === 0) break;
          const batch: EventBatch = {
            from: this.head,
            to: rows[rows.length - 1].sequence,
            events: rows.map(streamedEventOf),
          };
          this.head = batch.to;
          this.fanOut(batch);
          if (rows.length < SHARED_READ_PAGE) break;
        }
      } while (this.dirty && !this.disposed);
    } catch (error) {
      this.logger.error(
        { msg: 'event stream read failed', project_id: this.projectId, error: String(error) },
        undefined,
        'ProjectEventHub',
      );
      for (const stream of [...this.streams]) {
        stream.fail('internal_error', 'The event stream failed; reconnect with Last-Event-ID');
      }
    } finally {
      this.reading = false;
    }
  }

  /**
   * Hands a batch to every stream. The hub reads owner-only events too: a `project_member.removed`
   * holds the streams of the removed subject (any stream whose caller's account or Client is the
   * payload's `account_id`/`client_id`) right after the removal and re-checks their access at once;
   * they end if access is gone, and otherwise catch up on what was held back.
   */
  private fanOut(batch: EventBatch): void {
    const removals = batch.events.filter((e) => e.type === MEMBER_REMOVED);
    if (removals.length === 0) {
      for (const stream of [...this.streams]) stream.deliver(batch);
      return;
    }
    const subjects = removals.map((e) => {
      const { payload } = JSON.parse(e.data) as { payload?: { account_id?: unknown; client_id?: unknown } };
      return { sequence: e.sequence, accountId: payload?.account_id, clientId: payload?.client_id };
    });
    const held: ProjectEventStream[] = [];
    const truncated = new Map<number, EventBatch>();
    for (const stream of [...this.streams]) {
      const actor = stream.actor;
      const removal =
        actor &&
        subjects.find(
          (s) =>
            (typeof s.accountId !== 'string' && typeof s.clientId !== 'string') ||
            s.accountId === actor.accountId ||
            s.clientId === actor.clientId,
        );
      if (!removal) {
        stream.deliver(batch);
        continue;
      }
      let upToRemoval = truncated.get(removal.sequence);
      if (!upToRemoval) {
        upToRemoval = {
          from: batch.from,
          to: removal.sequence,
          events: batch.events.filter((e) => e.sequence <= removal.sequence),
        };
        truncated.set(removal.sequence, upToRemoval);
      }
      stream.deliver(upToRemoval);
      stream.suspend();
      held.push(stream);
    }
    if (held.length > 0) this.recheck(held);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = null;
    this.subscribed = false;
    if (unsubscribe) await unsubscribe().catch(() => undefined);
  }
}

export interface EventStreamRequest {
  filter: ProjectEventFilter;
  /** The resume cursor: events with a greater sequence are sent. */
  after: number;
  /** The caller, whose access is re-checked while the stream is open (none: never re-checked). */
  actor?: Actor;
}

/**
 * Per API process: fans each Project's wake-ups out to its open SSE streams (ARCHITECTURE.md
 * "Project events", performance-and-reliability.md A3/A4/C3). Redis only wakes; every stream reads
 * from Postgres. Also re-reads on bus resync and on a slow safety poll, so a lost publish only
 * delays. Ends every stream when the application shuts down so clients reconnect elsewhere.
 */
@Injectable()
export class ProjectEventHub implements OnModuleDestroy {
  private readonly channels = new Map<string, ProjectChannel>();
  private readonly opening = new Map<string, Promise<ProjectChannel>>();
  private readonly pollTimer: NodeJS.Timeout;
  private readonly stopResync: () => void;
  private closed = false;
  /** Streams waiting for an access re-check; one re-check runs at a time, for all Projects. */
  private readonly toCheck = new Set<ProjectEventStream>();
  private checking = false;

  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(CONFIG) config: AppConfig,
    private readonly accessCheck: ProjectEventAccessCheck,
  ) {
    this.pollTimer = setInterval(() => this.poll(), config.eventStreamPollMs);
    this.pollTimer.unref();
    this.stopResync = bus.onResync(() => {
      this.logger.warn({ msg: 'event bus reconnected; re-reading open streams' }, 'ProjectEventHub');
      this.poll();
    });
  }

  /** Open streams in this process (all Projects). */
  get streamCount(): number {
    let n = 0;
    for (const channel of this.channels.values()) n += channel.streams.size;
    return n;
  }

  /**
   * Registers a stream on its Project's channel (subscribing first if it is the Project's first
   * stream). Call `start(sink)` on the result once the response is ready to receive events.
   */
  async open(request: EventStreamRequest): Promise<ProjectEventStream> {
    if (this.closed) throw new DomainError('feature_unavailable', 503, 'The server is shutting down');
    const channel = await this.channelFor(request.filter.projectId);
    if (this.closed) throw new DomainError('feature_unavailable', 503, 'The server is shutting down');
    const stream = new ProjectEventStream(
      this.db,
      request.filter,
      request.after,
      (error) =>
        this.logger.error(
          { msg: 'event stream catch-up failed', project_id: channel.projectId, error: String(error) },
          undefined,
          'ProjectEventHub',
        ),
      request.actor ?? null,
    );
    channel.streams.add(stream);
    this.metrics.sseConnections.inc(STREAM_METRIC_LABEL);
    stream.onClosed(() => {
      this.metrics.sseConnections.dec(STREAM_METRIC_LABEL);
      channel.streams.delete(stream);
      if (channel.streams.size === 0 && this.channels.get(channel.projectId) === channel) {
        this.channels.delete(channel.projectId);
        void channel.dispose();
      }
    });
    return stream;
  }

  /** Starts a registered stream on its sink. */
  start(stream: ProjectEventStream, sink: EventStreamSink): void {
    stream.start(sink);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    this.stopResync();
    const channels = [...this.channels.values()];
    for (const channel of channels) {
      for (const stream of [...channel.streams]) stream.end();
    }
    this.channels.clear();
    await Promise.all(channels.map((c) => c.dispose()));
  }

  private async channelFor(projectId: string): Promise<ProjectChannel> {
    const existing = this.channels.get(projectId);
    if (existing) return existing;
    let opening = this.opening.get(projectId);
    if (!opening) {
      opening = (async () => {
        const channel = new ProjectChannel(projectId, this.db, this.bus, this.logger, (streams) =>
          this.recheck(streams),
        );
        try {
          await channel.open();
          if (this.closed) throw new DomainError('feature_unavailable', 503, 'The server is shutting down');
        } catch (error) {
          await channel.dispose();
          throw error;
        }
        this.channels.set(projectId, channel);
        return channel;
      })().finally(() => this.opening.delete(projectId));
      this.opening.set(projectId, opening);
    }
    return opening;
  }

  /**
   * The safety poll and the resync: every channel re-reads (and retries a failed subscription) and
   * re-checks its streams' access (a disabled account or Client, a Project gone), batched per Project.
   */
  private poll(): void {
    const streams: ProjectEventStream[] = [];
    for (const channel of this.channels.values()) {
      if (!channel.subscribed) void channel.subscribe();
      channel.wake();
      streams.push(...channel.streams);
    }
    this.recheck(streams);
  }

  /** Queues streams for an access re-check (coalesced: one check in flight per process). */
  private recheck(streams: Iterable<ProjectEventStream>): void {
    if (this.closed) return;
    for (const stream of streams) this.toCheck.add(stream);
    if (!this.checking && this.toCheck.size > 0) void this.runChecks();
  }

  private async runChecks(): Promise<void> {
    this.checking = true;
    try {
      while (this.toCheck.size > 0 && !this.closed) {
        const streams = [...this.toCheck];
        this.toCheck.clear();
        try {
          for (const { stream, message } of await this.accessCheck.revoked(streams)) {
            stream.fail(STREAM_ACCESS_REVOKED, message);
          }
        } catch (error) {
          // A failed check (database down) keeps the streams; the next poll checks again.
          this.logger.warn(
            { msg: 'event stream access re-check failed', error: String(error) },
            'ProjectEventHub',
          );
        }
        this.release(streams);
      }
    } finally {
      this.checking = false;
    }
  }

  /**
   * Resumes held streams after their check, except those queued again meanwhile (a removal that
   * arrived while an earlier check, maybe read before it committed, was in flight): they wait for
   * the next check.
   */
  private release(streams: ProjectEventStream[]): void {
    for (const stream of streams) if (!this.toCheck.has(stream)) stream.resume();
  }
}
