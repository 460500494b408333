import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readOperationLogs, type OperationLogList, type OperationLogListInput } from './operation-log-list';

/** `GET /operation-logs`: the caller's account's operation log, filtered. */
@Injectable()
export class ListOperationLogsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: OperationLogListInput): Promise<OperationLogList> {
    return readOperationLogs(this.db, actor, input);
  }
}
