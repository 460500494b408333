import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { type Actor, ProjectAccess } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { type AppConfig, CONFIG, DB } from '@hearth/platform';
import { ProjectEventHub } from './project-event-hub';
import { resolveProjectEventFilter, type ProjectEventFilterInput } from './project-event-filter';
import type { EventStreamSink } from './project-event-stream';

export interface OpenProjectEventStreamInput extends ProjectEventFilterInput {
  after?: number;
  /** The `Last-Event-ID` header as received. */
  last_event_id?: string;
}

/** A checked stream, ready to start once the caller has opened its response. */
export interface PreparedEventStream {
  /** The cursor the stream resumes from. */
  after: number;
  start(sink: EventStreamSink): void;
  /** Releases the registration when the response could not be opened. */
  cancel(): void;
}

/** `Last-Event-ID` carries a sequence: a non-negative integer. */
export function parseLastEventId(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const value = raw.trim();
  if (value === '') return null;
  if (!/^\d{1,15}$/.test(value)) {
    throw new DomainError('validation_error', 400, 'Last-Event-ID must be a non-negative integer sequence', {
      fields: [{ field: 'Last-Event-ID', problems: ['must be a non-negative integer'] }],
    });
  }
  return Number(value);
}

/**
 * `GET /projects/:id/events/stream`: checks the switch, the caller's access and the filters, then
 * registers the stream on this process's hub. Everything that can be refused is refused here,
 * before the response becomes an event stream. The cursor is the larger of `after` and
 * `Last-Event-ID` (performance-and-reliability.md C3).
 */
@Injectable()
export class OpenProjectEventStreamUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly hub: ProjectEventHub,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: OpenProjectEventStreamInput,
  ): Promise<PreparedEventStream> {
    if (!this.config.eventStreamEnabled) {
      throw new DomainError('feature_unavailable', 503, 'The event stream is not enabled on this server');
    }
    const lastEventId = parseLastEventId(input.last_event_id);
    const { filter } = await resolveProjectEventFilter(this.db, this.access, actor, projectId, input);
    const after = Math.max(input.after ?? 0, lastEventId ?? 0);
    const stream = await this.hub.open({ filter, after, actor });
    return { after, start: (sink) => this.hub.start(stream, sink), cancel: () => stream.end() };
  }
}
