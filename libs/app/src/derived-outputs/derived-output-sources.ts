import { DomainError } from '@hearth/domain';
import {
  derivedOutputSourcesRepository,
  sessionsRepository,
  type Executor,
  type ProjectRow,
  type SourceScope,
} from '@hearth/persistence';

export interface DerivedOutputSources {
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
}

const mismatch = (what: string) =>
  new DomainError(
    'derived_output_source_scope_mismatch',
    409,
    `The source ${what} does not belong to this Project`,
  );

/** Where the given sources live, as read (null: not found). */
export interface DerivedOutputSourceScopes {
  session: Pick<SourceScope, 'account_id' | 'project_id'> | null;
  floor: SourceScope | null;
  page: SourceScope | null;
}

/**
 * Source session, floor and page must belong to the Project (spec 1). A source that does not exist,
 * or belongs to another account, answers 404 (`session_not_found`, `floor_not_found`,
 * `page_not_found`), so other accounts' objects are not revealed; one of the same account but in
 * another Project (or another session or floor than the other sources given) answers 409
 * `derived_output_source_scope_mismatch`. Checked in that order: session, floor, page.
 */
export async function validateDerivedOutputSources(
  db: Executor,
  project: ProjectRow,
  sources: DerivedOutputSources,
): Promise<void> {
  const { source_session_id: sessionId, source_floor_id: floorId, source_page_id: pageId } = sources;
  const session = sessionId === null ? undefined : await sessionsRepository.findSession(db, sessionId);
  const floor =
    floorId === null ? undefined : await derivedOutputSourcesRepository.findFloorScope(db, floorId);
  const page = pageId === null ? undefined : await derivedOutputSourcesRepository.findPageScope(db, pageId);
  const error = derivedOutputSourcesError(project, sources, {
    session: session ?? null,
    floor: floor ?? null,
    page: page ?? null,
  });
  if (error) throw error;
}

/**
 * The first source rule the scopes break (see validateDerivedOutputSources), or null. Pure, so a
 * write that reads the scopes in its own statement answers with the same error.
 */
export function derivedOutputSourcesError(
  project: Pick<ProjectRow, 'id' | 'account_id'>,
  sources: DerivedOutputSources,
  scopes: DerivedOutputSourceScopes,
): DomainError | null {
  const { source_session_id: sessionId, source_floor_id: floorId, source_page_id: pageId } = sources;
  if (sessionId !== null) {
    const session = scopes.session;
    if (!session || session.account_id !== project.account_id) {
      return new DomainError('session_not_found', 404, 'Source session not found');
    }
    if (session.project_id !== project.id) return mismatch('session');
  }
  if (floorId !== null) {
    const floor = scopes.floor;
    if (!floor || floor.account_id !== project.account_id)
      return new DomainError('floor_not_found', 404, 'Source floor not found');
    if (floor.project_id !== project.id || (sessionId !== null && floor.session_id !== sessionId))
      return mismatch('floor');
  }
  if (pageId !== null) {
    const page = scopes.page;
    if (!page || page.account_id !== project.account_id)
      return new DomainError('page_not_found', 404, 'Source page not found');
    if (
      page.project_id !== project.id ||
      (sessionId !== null && page.session_id !== sessionId) ||
      (floorId !== null && page.floor_id !== floorId)
    ) {
      return mismatch('page');
    }
  }
  return null;
}
