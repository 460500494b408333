import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { snapshotOfRow, type RunSnapshot } from './live-run';
import { requireRun } from './run-access';
import { RunRegistry } from './run-registry';

/**
 * `POST /runs/:id/cancel`: asks the process generating the run to stop (here, or on another replica
 * through the bus). The run then ends `cancelled` like a client disconnect: its generating floor is
 * removed and the JSON route that started it answers 499 `generation_cancelled`. Cancelling a run that
 * already ended changes nothing. Answers the run as it is now (202: the cancellation is asynchronous).
 */
@Injectable()
export class CancelRunUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly registry: RunRegistry,
  ) {}

  async execute(actor: Actor, runId: string): Promise<RunSnapshot> {
    const { run } = await requireRun(this.access, this.db, actor, runId, 'project.session.write');
    if (run.status === 'running') await this.registry.requestCancel(run.id);
    return this.registry.get(run.id)?.snapshot() ?? snapshotOfRow(run);
  }
}
