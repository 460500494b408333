import { Injectable } from '@nestjs/common';
import { RunBackupJobUseCase, RunLedgerJobUseCase } from '@hearth/app';
import type { JobDelivery, JobHandlerOutcome, JobPayloads } from '@hearth/platform';
import type { JobProcessor } from './job-processor';

/** `backup.transfer`: an account backup export or restore (spec 3 "Backup"), run under the job ledger. */
@Injectable()
export class BackupTransferProcessor implements JobProcessor<'backup.transfer'> {
  readonly jobName = 'backup.transfer' as const;

  constructor(
    private readonly runner: RunLedgerJobUseCase,
    private readonly backup: RunBackupJobUseCase,
  ) {}

  handle(
    payload: JobPayloads['backup.transfer'],
    delivery: JobDelivery<'backup.transfer'>,
  ): Promise<JobHandlerOutcome | void> {
    return this.runner.execute(
      'backup.transfer',
      payload.job_id,
      () => this.backup.execute(payload.job_id),
      delivery.signal,
    );
  }
}
