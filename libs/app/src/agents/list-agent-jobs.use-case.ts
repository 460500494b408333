import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, type Db, type JobRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { AgentProjectAccess } from './agent-access';
import type { AgentJobStatus } from './agent-views';

/** Spec 1 "Agent job list page size": max 100; the default is ours (docs/decisions.md "Agents"). */
export const AGENT_JOB_LIST_MAX_LIMIT = 100;
export const AGENT_JOB_LIST_DEFAULT_LIMIT = 50;

export interface ListAgentJobsInput {
  status?: AgentJobStatus;
  limit?: number;
  offset?: number;
}

/**
 * `GET /projects/:id/agent-jobs` (`project.agent.read`): the Project's `agent.run` jobs, newest
 * first, one entry per job, with the total of the filter.
 */
@Injectable()
export class ListAgentJobsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: ListAgentJobsInput,
  ): Promise<{ items: JobRow[]; total: number }> {
    const { project } = await this.access.forRead(actor, projectId);
    return agentsRepository.listJobs(this.db, project.id, {
      status: input.status,
      limit: input.limit ?? AGENT_JOB_LIST_DEFAULT_LIMIT,
      offset: input.offset ?? 0,
    });
  }
}
