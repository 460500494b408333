import { DomainError } from '@hearth/domain';
import { inboxSourcesRepository, type Executor, type ProjectRow } from '@hearth/persistence';
import {
  validateDerivedOutputSources,
  type DerivedOutputSources,
} from '../derived-outputs/derived-output-sources';

export interface InboxEntrySources extends DerivedOutputSources {
  derived_output_id: string | null;
}

const mismatch = (message: string) => new DomainError('inbox_entry_source_scope_mismatch', 409, message);

/**
 * An entry's sources must belong to its Project. Session, floor and page are checked by the derived
 * output source rules (404 `session_not_found` / `floor_not_found` / `page_not_found` when missing or
 * of another account), with their scope mismatch answered as 409 `inbox_entry_source_scope_mismatch`.
 * `derived_output_id` must name a derived output of the Project: 404 `derived_output_not_found` when
 * missing or of another account, 409 `inbox_entry_source_scope_mismatch` when of another Project.
 */
export async function validateInboxEntrySources(
  db: Executor,
  project: ProjectRow,
  sources: InboxEntrySources,
): Promise<void> {
  const { derived_output_id: derivedOutputId, ...rest } = sources;
  try {
    await validateDerivedOutputSources(db, project, rest);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'derived_output_source_scope_mismatch') {
      throw mismatch(error.message);
    }
    throw error;
  }
  if (derivedOutputId !== null) {
    const output = await inboxSourcesRepository.findDerivedOutputScope(db, derivedOutputId);
    if (!output || output.account_id !== project.account_id) {
      throw new DomainError('derived_output_not_found', 404, 'Source derived output not found');
    }
    if (output.project_id !== project.id) {
      throw mismatch('The source derived output does not belong to this Project');
    }
  }
}
