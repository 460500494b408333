import { DomainError } from '@hearth/domain';
import { type Actor, type ProjectAccess, visibleEventLevels, type ProjectGrant } from '@hearth/permissions';
import { type Executor, projectEventsRepository } from '@hearth/persistence';

/** What a caller may see of a Project's log, and what it asked to see. Shared by query and stream. */
export interface ProjectEventFilter {
  projectId: string;
  /** From the caller's role: owners `project` + `owner`, others `project`; `internal` never. */
  visibilities: Array<'project' | 'owner'>;
  /** Empty: every type. */
  types: string[];
  sessionId: string | null;
}

export interface ProjectEventFilterInput {
  types?: string;
  session_id?: string;
}

/** `types` is comma-separated; blanks are ignored and repeats collapse. */
export function parseEventTypes(raw: string | undefined): string[] {
  if (!raw) return [];
  return [
    ...new Set(
      raw
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0),
    ),
  ];
}

export function eventMatches(
  filter: ProjectEventFilter,
  event: { visibility: string; type: string; sessionId: string | null },
): boolean {
  if (!(filter.visibilities as string[]).includes(event.visibility)) return false;
  if (filter.types.length > 0 && !filter.types.includes(event.type)) return false;
  if (filter.sessionId !== null && event.sessionId !== filter.sessionId) return false;
  return true;
}

/**
 * Checks `project.observe` (non-members 404 `project_not_found`) and that `session_id`, when given,
 * belongs to the Project (otherwise 404 `session_not_found`), and returns the effective filter.
 */
export async function resolveProjectEventFilter(
  db: Executor,
  access: ProjectAccess,
  actor: Actor,
  projectId: string,
  input: ProjectEventFilterInput,
): Promise<{ grant: ProjectGrant; filter: ProjectEventFilter }> {
  const grant = await access.require(actor, projectId, 'project.observe', { db });
  const sessionId = input.session_id ?? null;
  if (
    sessionId !== null &&
    !(await projectEventsRepository.sessionBelongsToProject(db, projectId, sessionId))
  ) {
    throw new DomainError('session_not_found', 404, 'Session not found in this Project');
  }
  return {
    grant,
    filter: {
      projectId,
      visibilities: visibleEventLevels(grant.role),
      types: parseEventTypes(input.types),
      sessionId,
    },
  };
}
