import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, jobsRepository, type Db, type JobRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { AgentProjectAccess } from './agent-access';
import { requireAgentJob } from './get-agent-job.use-case';

/**
 * `POST /projects/:id/agent-jobs/:job_id/cancel` (`project.agent.run`): a `pending` or
 * `retry_waiting` job becomes `cancelled` (a conditional update, so a worker claiming it at the same
 * moment either wins or finds it cancelled); any other state answers 409
 * `project_agent_job_invalid_state` with the job's status. Allowed in an archived Project too
 * (stopping work is not a write into it; docs/decisions.md "Agents"). The change and its
 * `agent_job.cancel` log are one transaction.
 */
@Injectable()
export class CancelAgentJobUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, projectId: string, jobId: string): Promise<JobRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.agent.run', tx, {
        allowArchived: true,
      });
      const job = await requireAgentJob(tx, project.id, jobId);
      const cancelled = await jobsRepository.cancel(tx, { id: job.id, now: Date.now() });
      if (!cancelled) {
        const current = (await requireAgentJob(tx, project.id, jobId)).status;
        throw new DomainError(
          'project_agent_job_invalid_state',
          409,
          `A ${current} agent job cannot be cancelled; only pending and retry_waiting ones can`,
          { status: current },
        );
      }
      await this.logs.write(tx, actor, {
        action: 'agent_job.cancel',
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        target_type: 'agent_job',
        target_id: job.id,
        before_ref: { status: job.status },
        after_ref: { status: cancelled.status },
        metadata: { agent_binding_id: job.agent_binding_id, agent_type_id: job.agent_type_id },
      });
      return cancelled;
    });
  }
}
