import type { JobDelivery, JobHandlerOutcome, JobName, JobPayloads } from '@hearth/platform';

/**
 * A processor is transport only (ARCHITECTURE.md rule 1): it takes one job name's payload and
 * calls one use case. Exactly one processor per consumed job name, checked at worker start.
 */
export interface JobProcessor<N extends JobName = JobName> {
  readonly jobName: N;
  handle(payload: JobPayloads[N], delivery: JobDelivery<N>): Promise<JobHandlerOutcome | void>;
}
