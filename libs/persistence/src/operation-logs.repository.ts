import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { OperationLogsTable } from './tables';

export type OperationLogRow = Selectable<OperationLogsTable>;

export const operationLogsRepository = {
  async insert(db: Executor, row: Insertable<OperationLogsTable>): Promise<OperationLogRow> {
    return db.insertInto('operation_logs').values(row).returningAll().executeTakeFirstOrThrow();
  },
};
