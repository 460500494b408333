import { Injectable } from '@nestjs/common';
import { RunAgentJobUseCase, RunLedgerJobUseCase } from '@hearth/app';
import type { JobDelivery, JobHandlerOutcome, JobPayloads } from '@hearth/platform';
import type { JobProcessor } from './job-processor';

/**
 * `agent.run`: one run of an Agent Binding (spec 1 "Agent Job"), under the job ledger with the agent
 * claim (one job at a time per serial scope; a busy scope delivers the entry again shortly).
 */
@Injectable()
export class AgentRunProcessor implements JobProcessor<'agent.run'> {
  readonly jobName = 'agent.run' as const;

  constructor(
    private readonly runner: RunLedgerJobUseCase,
    private readonly agentRun: RunAgentJobUseCase,
  ) {}

  handle(
    payload: JobPayloads['agent.run'],
    delivery: JobDelivery<'agent.run'>,
  ): Promise<JobHandlerOutcome | void> {
    return this.runner.execute(
      'agent.run',
      payload.job_id,
      ({ job, signal }) => this.agentRun.execute(job, signal),
      delivery.signal,
      { claim: this.agentRun.claim },
    );
  }
}
