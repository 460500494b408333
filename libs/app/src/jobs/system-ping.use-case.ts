import { Injectable } from '@nestjs/common';
import type { JobHandlerOutcome } from '@hearth/platform';
import { RunLedgerJobUseCase } from './run-ledger-job.use-case';

/** `system.ping`: the smallest real job. Its result `{pong: true}` proves queue, worker and ledger work. */
@Injectable()
export class SystemPingUseCase {
  constructor(private readonly runner: RunLedgerJobUseCase) {}

  execute(jobId: string, signal?: AbortSignal): Promise<JobHandlerOutcome | void> {
    return this.runner.execute('system.ping', jobId, async () => ({ pong: true }), signal);
  }
}
