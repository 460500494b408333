import { Inject, Injectable } from '@nestjs/common';
import { type Db, inTransaction, type JobRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { CreateJobUseCase } from './create-job.use-case';

/** Creates a `system.ping` job (operators, the worker's start-up self-check and tests use it). */
@Injectable()
export class RequestSystemPingUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly createJob: CreateJobUseCase,
  ) {}

  async execute(input: { account_id?: string | null } = {}): Promise<JobRow> {
    const { job } = await inTransaction(this.db, (uow) =>
      this.createJob.execute(uow, { name: 'system.ping', account_id: input.account_id ?? null }),
    );
    return job;
  }
}
