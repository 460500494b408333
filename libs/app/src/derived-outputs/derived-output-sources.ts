import { DomainError } from '@hearth/domain';
import {
  derivedOutputSourcesRepository,
  sessionsRepository,
  type Executor,
  type ProjectRow,
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

/**
 * Source session, floor and page must belong to the Project (spec 1). A source that does not exist,
 * or belongs to another account, answers 404 (`session_not_found`, `floor_not_found`,
 * `page_not_found`), so other accounts' objects are not revealed; one of the same account but in
 * another Project (or another session or floor than the other sources given) answers 409
 * `derived_output_source_scope_mismatch`.
 */
export async function validateDerivedOutputSources(
  db: Executor,
  project: ProjectRow,
  sources: DerivedOutputSources,
): Promise<void> {
  const { source_session_id: sessionId, source_floor_id: floorId, source_page_id: pageId } = sources;
  if (sessionId !== null) {
    const session = await sessionsRepository.findSession(db, sessionId);
    if (!session || session.account_id !== project.account_id) {
      throw new DomainError('session_not_found', 404, 'Source session not found');
    }
    if (session.project_id !== project.id) throw mismatch('session');
  }
  if (floorId !== null) {
    const floor = await derivedOutputSourcesRepository.findFloorScope(db, floorId);
    if (!floor || floor.account_id !== project.account_id)
      throw new DomainError('floor_not_found', 404, 'Source floor not found');
    if (floor.project_id !== project.id || (sessionId !== null && floor.session_id !== sessionId))
      throw mismatch('floor');
  }
  if (pageId !== null) {
    const page = await derivedOutputSourcesRepository.findPageScope(db, pageId);
    if (!page || page.account_id !== project.account_id)
      throw new DomainError('page_not_found', 404, 'Source page not found');
    if (
      page.project_id !== project.id ||
      (sessionId !== null && page.session_id !== sessionId) ||
      (floorId !== null && page.floor_id !== floorId)
    ) {
      throw mismatch('page');
    }
  }
}
