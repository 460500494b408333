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

/**
 * Runs a multi-read (an export) in one REPEATABLE READ, READ ONLY transaction, so every read sees one
 * snapshot: a write committing between two reads cannot give a document whose parts do not match (a
 * branch head its floors do not hold, a page without its messages), which its own import would refuse.
 * The reads run one after another on the transaction's connection.
 */
export async function inReadSnapshot<T>(db: Db, read: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
