import { Injectable } from '@nestjs/common';
import { RunChatTransferJobUseCase, RunLedgerJobUseCase } from '@hearth/app';
import type { JobDelivery, JobHandlerOutcome, JobPayloads } from '@hearth/platform';
import type { JobProcessor } from './job-processor';

/** `chat.transfer`: an asynchronous chat import or export (spec 3), run under the job ledger. */
@Injectable()
export class ChatTransferProcessor implements JobProcessor<'chat.transfer'> {
  readonly jobName = 'chat.transfer' as const;

  constructor(
    private readonly runner: RunLedgerJobUseCase,
    private readonly chatTransfer: RunChatTransferJobUseCase,
  ) {}

  handle(
    payload: JobPayloads['chat.transfer'],
    delivery: JobDelivery<'chat.transfer'>,
  ): Promise<JobHandlerOutcome | void> {
    return this.runner.execute(
      'chat.transfer',
      payload.job_id,
      () => this.chatTransfer.execute(payload.job_id),
      delivery.signal,
    );
  }
}
