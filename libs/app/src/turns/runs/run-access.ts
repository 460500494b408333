import { DomainError } from '@hearth/domain';
import type { Actor, ProjectAccess, ProjectCapability } from '@hearth/permissions';
import {
  generationRunsRepository,
  sessionsRepository,
  type Executor,
  type GenerationRunRow,
  type SessionRow,
} from '@hearth/persistence';

export const runNotFound = () => new DomainError('run_not_found', 404, 'Run not found');

/**
 * A run the caller may act on: members of its session's Project read it (`project.read`), the owner
 * cancels it (`project.session.write`); a missing run and a run of a session the caller cannot see both
 * answer 404 `run_not_found`.
 */
export async function requireRun(
  access: ProjectAccess,
  db: Executor,
  actor: Actor,
  runId: string,
  capability: ProjectCapability,
): Promise<{ run: GenerationRunRow; session: SessionRow }> {
  const run = await generationRunsRepository.find(db, runId);
  if (!run) throw runNotFound();
  const session = await sessionsRepository.findSession(db, run.session_id);
  if (!session) throw runNotFound();
  await access.require(actor, session.project_id, capability, {
    db,
    notFoundCode: 'run_not_found',
    notFoundMessage: runNotFound().message,
  });
  return { run, session };
}
