import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { conversationRepository, operationLogsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireFloor } from '../conversation/conversation-access';
import { readOperationLogs, type OperationLogList, type OperationLogListInput } from './operation-log-list';

/**
 * `GET /floors/:id/operation-logs`: the caller's rows of one floor. A floor that exists must be one the
 * caller may read (a member of its session's Project); any other answers 404 `not_found`. A floor that
 * no longer exists (its session was deleted) keeps its log rows: the caller's own rows with that
 * floor_id are then the evidence, and without any the answer is 404 `not_found` as well.
 */
@Injectable()
export class ListFloorOperationLogsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, floorId: string, input: OperationLogListInput): Promise<OperationLogList> {
    if (await conversationRepository.findFloor(this.db, floorId)) {
      await requireFloor(this.access, this.db, actor, floorId, 'project.read', { notFoundCode: 'not_found' });
    } else {
      const known = await operationLogsRepository.count(this.db, {
        accountId: actor.accountId,
        filters: { floor_id: floorId },
      });
      if (known === 0) throw notFound('not_found', 'Floor not found');
    }
    return readOperationLogs(this.db, actor, { ...input, filters: { ...input.filters, floor_id: floorId } });
  }
}
