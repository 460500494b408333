import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { operationLogsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { readOperationLogs, type OperationLogList, type OperationLogListInput } from './operation-log-list';

/**
 * `GET /sessions/:id/operation-logs`: the caller's rows of one session. A session that is missing or
 * belongs to another account answers 404 `not_found` (spec 3 "Errors").
 */
@Injectable()
export class ListSessionOperationLogsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, sessionId: string, input: OperationLogListInput): Promise<OperationLogList> {
    if (!(await operationLogsRepository.sessionBelongsToAccount(this.db, sessionId, actor.accountId))) {
      throw notFound('not_found', 'Session not found');
    }
    return readOperationLogs(this.db, actor, {
      ...input,
      filters: { ...input.filters, session_id: sessionId },
    });
  }
}
