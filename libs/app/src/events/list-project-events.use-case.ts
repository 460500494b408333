import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { ProjectAccess } from '@hearth/permissions';
import { type Db, projectEventsRepository } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { type ProjectEventItem, toProjectEventItem } from './project-event-item';
import { resolveProjectEventFilter, type ProjectEventFilterInput } from './project-event-filter';

export const EVENT_QUERY_DEFAULT_LIMIT = 100;
export const EVENT_QUERY_MAX_LIMIT = 500;

export interface ListProjectEventsInput extends ProjectEventFilterInput {
  after?: number;
  limit?: number;
}

export interface ProjectEventPage {
  items: ProjectEventItem[];
  /** The last returned sequence, or `after` when none: the next request's `after`. */
  next_after: number;
  has_more: boolean;
}

/** `GET /projects/:id/events`: keyset paging over the log by `sequence`, filtered by visibility. */
@Injectable()
export class ListProjectEventsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string, input: ListProjectEventsInput): Promise<ProjectEventPage> {
    const { filter } = await resolveProjectEventFilter(this.db, this.access, actor, projectId, input);
    const after = input.after ?? 0;
    const limit = Math.min(input.limit ?? EVENT_QUERY_DEFAULT_LIMIT, EVENT_QUERY_MAX_LIMIT);
    // Commits follow sequence order within a Project (the counter row lock), so a keyset read never
    // skips a sequence that commits later: nothing above a visible row can still be in flight below it.
    const rows = await projectEventsRepository.listAfter(this.db, {
      projectId,
      after,
      visibilities: filter.visibilities,
      types: filter.types,
      sessionId: filter.sessionId ?? undefined,
      limit: limit + 1,
    });
    const hasMore = rows.length > limit;
    const items = rows.slice(0, limit).map(toProjectEventItem);
    return {
      items,
      next_after: items.length > 0 ? items[items.length - 1].sequence : after,
      has_more: hasMore,
    };
  }
}
