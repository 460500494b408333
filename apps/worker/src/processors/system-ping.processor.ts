import { Injectable } from '@nestjs/common';
import { SystemPingUseCase } from '@hearth/app';
import type { JobDelivery, JobHandlerOutcome, JobPayloads } from '@hearth/platform';
import type { JobProcessor } from './job-processor';

@Injectable()
export class SystemPingProcessor implements JobProcessor<'system.ping'> {
  readonly jobName = 'system.ping' as const;

  constructor(private readonly systemPing: SystemPingUseCase) {}

  handle(
    payload: JobPayloads['system.ping'],
    delivery: JobDelivery<'system.ping'>,
  ): Promise<JobHandlerOutcome | void> {
    return this.systemPing.execute(payload.job_id, delivery.signal);
  }
}
