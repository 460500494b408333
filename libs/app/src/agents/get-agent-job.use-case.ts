import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, type Db, type Executor, type JobRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { AgentProjectAccess } from './agent-access';

export const agentJobNotFound = () =>
  new DomainError('project_agent_job_not_found', 404, 'Agent job not found in this Project');

/** An `agent.run` job of the Project, or 404 `project_agent_job_not_found`. */
export async function requireAgentJob(db: Executor, projectId: string, jobId: string): Promise<JobRow> {
  const job = await agentsRepository.findJob(db, projectId, jobId);
  if (!job) throw agentJobNotFound();
  return job;
}

/** `GET /projects/:id/agent-jobs/:job_id` (`project.agent.read`). */
@Injectable()
export class GetAgentJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string, jobId: string): Promise<JobRow> {
    const { project } = await this.access.forRead(actor, projectId);
    return requireAgentJob(this.db, project.id, jobId);
  }
}
