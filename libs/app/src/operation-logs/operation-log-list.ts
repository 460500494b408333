import type { Actor } from '@hearth/permissions';
import {
  operationLogsRepository,
  type Executor,
  type OperationLogFilterField,
  type OperationLogRow,
} from '@hearth/persistence';

/** The query of the three operation-log read routes (spec 3 "Operation logs"). */
export interface OperationLogListInput {
  filters: Partial<Record<OperationLogFilterField, string>>;
  limit: number;
  offset: number;
  sortOrder: 'asc' | 'desc';
}

export interface OperationLogList {
  items: OperationLogRow[];
  total: number;
  limit: number;
  offset: number;
  sortOrder: 'asc' | 'desc';
}

/**
 * Reads one page of the caller's account's rows. Visibility is the account and is applied before
 * any filter, so a filter (even another account's id) can only narrow it.
 */
export async function readOperationLogs(
  db: Executor,
  actor: Actor,
  input: OperationLogListInput,
): Promise<OperationLogList> {
  const query = { accountId: actor.accountId, filters: input.filters };
  const page = { limit: input.limit, offset: input.offset, sortOrder: input.sortOrder };
  const [items, total] = await Promise.all([
    operationLogsRepository.list(db, query, page),
    operationLogsRepository.count(db, query),
  ]);
  return { items, total, ...page };
}
