import type { Db, Tx } from './database';

/**
 * One unit of work: a transaction plus the actions to run only once it has committed (Redis
 * publishes, job enqueues). An after-commit action that fails is reported and never undoes the
 * commit (ARCHITECTURE.md rule 4).
 */
export interface UnitOfWork {
  tx: Tx;
  afterCommit(action: () => Promise<unknown> | unknown): void;
}

export type AfterCommitErrorHandler = (error: unknown) => void;

export async function inTransaction<T>(
  db: Db,
  work: (uow: UnitOfWork) => Promise<T>,
  onAfterCommitError: AfterCommitErrorHandler = () => undefined,
): Promise<T> {
  const actions: Array<() => Promise<unknown> | unknown> = [];
  const result = await db.transaction().execute((tx) => work({ tx, afterCommit: (a) => actions.push(a) }));
  for (const action of actions) {
    try {
      await action();
    } catch (error) {
      onAfterCommitError(error);
    }
  }
  return result;
}
