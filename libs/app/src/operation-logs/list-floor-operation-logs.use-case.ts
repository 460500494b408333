import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { operationLogsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readOperationLogs, type OperationLogList, type OperationLogListInput } from './operation-log-list';

/**
 * `GET /floors/:id/operation-logs`: the caller's rows of one floor.
 *
 * TODO(issue 5): floors arrive with issue 5 and there is no floors table yet, so ownership cannot be
 * checked. Until then a floor counts as "of the account" when the account has at least one operation
 * log row with that floor_id, and answers 404 `not_found` otherwise. Issue 5 must replace this check
 * with a real one: the floor exists and its session belongs to the caller's account.
 */
@Injectable()
export class ListFloorOperationLogsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, floorId: string, input: OperationLogListInput): Promise<OperationLogList> {
    const known = await operationLogsRepository.count(this.db, {
      accountId: actor.accountId,
      filters: { floor_id: floorId },
    });
    if (known === 0) throw notFound('not_found', 'Floor not found');
    return readOperationLogs(this.db, actor, { ...input, filters: { ...input.filters, floor_id: floorId } });
  }
}
