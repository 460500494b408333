import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { snapshotOfRow, type RunSnapshot } from './live-run';
import { requireRun } from './run-access';
import { RunRegistry } from './run-registry';

/**
 * `GET /runs/:id`: the run snapshot (spec 2 "Run event snapshot"). A run this process generates is
 * answered from memory (its pending text is current); any other from its row (for a detached run the
 * pending text is as of the last stored batch).
 */
@Injectable()
export class GetRunUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly registry: RunRegistry,
  ) {}

  async execute(actor: Actor, runId: string): Promise<RunSnapshot> {
    const { run } = await requireRun(this.access, this.db, actor, runId, 'project.read');
    return this.registry.get(run.id)?.snapshot() ?? snapshotOfRow(run);
  }
}
