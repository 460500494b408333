import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { BranchesTable, PromptInjectionsTable, PromptPoliciesTable, SessionsTable } from './tables';

export type PromptPolicyRow = Selectable<PromptPoliciesTable>;
export type PromptInjectionRow = Selectable<PromptInjectionsTable>;

/**
 * How many expired, not yet removed injections a turn loads after the live ones, so that its trace
 * reports them `expired` (spec 2) without an unbounded read: records keep expiring until the
 * maintenance scan removes them.
 */
export const EXPIRED_INJECTIONS_FOR_TURN = 32;

/** Which persistent scope a query is about: the session (`branchId` null) or one branch of it. */
export interface PromptRuntimeScope {
  sessionId: string;
  branchId: string | null;
}

/** What a turn reads of the persistent prompt runtime state (spec 2 policy layers and injections). */
export interface PromptRuntimeForTurn {
  /** The session level's written fields, or null when never written. */
  sessionPolicy: Record<string, unknown> | null;
  /** The branch overlay's written fields, or null when never written. */
  branchPolicy: Record<string, unknown> | null;
  /** Session records then branch records mixed in creation order; expired ones left out. */
  injections: PromptInjectionRow[];
}

/**
 * Named queries of the session and branch prompt runtime (db/migrations/20261122070000_prompt_runtime.ts;
 * docs/decisions.md "Prompt runtime policy and injections"). Callers have checked access to the session.
 */
export const promptRuntimeRepository = {
  /**
   * The session row locked until the transaction ends (`FOR NO KEY UPDATE`, so inserts that reference the
   * session are not blocked): every policy or injection write of a session holds it, which serialises
   * version bumps and quota counts.
   */
  async lockSession(tx: Tx, sessionId: string): Promise<Selectable<SessionsTable> | undefined> {
    return tx
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .where('kind', '=', 'standard')
      .forNoKeyUpdate()
      .executeTakeFirst();
  },

  async findBranchOfSession(
    db: Executor,
    sessionId: string,
    branchId: string,
  ): Promise<Selectable<BranchesTable> | undefined> {
    return db
      .selectFrom('branches')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('id', '=', branchId)
      .executeTakeFirst();
  },

  /** A branch is materialised once it has a floor of its own (`floors.branch_id`). */
  async isBranchMaterialised(db: Executor, branchId: string): Promise<boolean> {
    const row = await db
      .selectFrom('floors')
      .select('id')
      .where('branch_id', '=', branchId)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },

  async findPolicy(db: Executor, scope: PromptRuntimeScope): Promise<PromptPolicyRow | undefined> {
    let q = db.selectFrom('prompt_policies').selectAll().where('session_id', '=', scope.sessionId);
    q =
      scope.branchId === null ? q.where('branch_id', 'is', null) : q.where('branch_id', '=', scope.branchId);
    return q.executeTakeFirst();
  },

  async insertPolicy(tx: Tx, row: Insertable<PromptPoliciesTable>): Promise<PromptPolicyRow> {
    return tx.insertInto('prompt_policies').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async updatePolicy(
    tx: Tx,
    scope: PromptRuntimeScope,
    changes: Updateable<PromptPoliciesTable>,
  ): Promise<PromptPolicyRow> {
    let q = tx.updateTable('prompt_policies').set(changes).where('session_id', '=', scope.sessionId);
    q =
      scope.branchId === null ? q.where('branch_id', 'is', null) : q.where('branch_id', '=', scope.branchId);
    return q.returningAll().executeTakeFirstOrThrow();
  },

  /** Live injections of exactly one scope, oldest first. */
  async listInjections(db: Executor, scope: PromptRuntimeScope, now: number): Promise<PromptInjectionRow[]> {
    let q = db.selectFrom('prompt_injections').selectAll().where('session_id', '=', scope.sessionId);
    q =
      scope.branchId === null ? q.where('branch_id', 'is', null) : q.where('branch_id', '=', scope.branchId);
    return q
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  async countInjections(db: Executor, scope: PromptRuntimeScope, now: number): Promise<number> {
    let q = db
      .selectFrom('prompt_injections')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('session_id', '=', scope.sessionId);
    q =
      scope.branchId === null ? q.where('branch_id', 'is', null) : q.where('branch_id', '=', scope.branchId);
    const row = await q
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A live injection of exactly this scope (another scope's id or an expired one: undefined). */
  async findInjection(
    db: Executor,
    scope: PromptRuntimeScope,
    id: string,
    now: number,
  ): Promise<PromptInjectionRow | undefined> {
    let q = db
      .selectFrom('prompt_injections')
      .selectAll()
      .where('id', '=', id)
      .where('session_id', '=', scope.sessionId);
    q =
      scope.branchId === null ? q.where('branch_id', 'is', null) : q.where('branch_id', '=', scope.branchId);
    return q
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
  },

  async insertInjection(tx: Tx, row: Insertable<PromptInjectionsTable>): Promise<PromptInjectionRow> {
    return tx.insertInto('prompt_injections').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async updateInjection(
    tx: Tx,
    id: string,
    changes: Updateable<PromptInjectionsTable>,
  ): Promise<PromptInjectionRow> {
    return tx
      .updateTable('prompt_injections')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async deleteInjection(tx: Tx, id: string): Promise<void> {
    await tx.deleteFrom('prompt_injections').where('id', '=', id).execute();
  },

  /**
   * Deletes up to `limit` injections expired at `now` and returns what was deleted (no bodies). Rows
   * another transaction holds are skipped, so several workers can run it at once.
   */
  async deleteExpiredInjections(
    tx: Tx,
    now: number,
    limit: number,
  ): Promise<Array<Pick<PromptInjectionRow, 'id' | 'account_id' | 'session_id' | 'scope'>>> {
    return tx
      .deleteFrom('prompt_injections')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('prompt_injections')
          .select('id')
          .where('expires_at', 'is not', null)
          .where('expires_at', '<=', now)
          .orderBy('expires_at', 'asc')
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .returning(['id', 'account_id', 'session_id', 'scope'])
      .execute();
  },

  /**
   * What a turn on `branchId` reads: the session policy, the branch overlay and the live injections of
   * the session and of that branch, in creation order (the engine's list order), followed by at most
   * `EXPIRED_INJECTIONS_FOR_TURN` records that have expired but are not removed yet (the most recently
   * expired, in creation order): they never apply, the engine traces them with `not_applied_reason`
   * `expired` (spec 2). Being last, they never take a live record's place in a scope quota.
   */
  async loadForTurn(
    db: Executor,
    sessionId: string,
    branchId: string,
    now: number = Date.now(),
  ): Promise<PromptRuntimeForTurn> {
    const policies = await db
      .selectFrom('prompt_policies')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where((eb) => eb.or([eb('branch_id', 'is', null), eb('branch_id', '=', branchId)]))
      .execute();
    const ofTurn = () =>
      db
        .selectFrom('prompt_injections')
        .selectAll()
        .where('session_id', '=', sessionId)
        .where((eb) => eb.or([eb('branch_id', 'is', null), eb('branch_id', '=', branchId)]));
    const live = await ofTurn()
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    const expired = await ofTurn()
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('expires_at', 'desc')
      .orderBy('id', 'desc')
      .limit(EXPIRED_INJECTIONS_FOR_TURN)
      .execute();
    expired.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const injections = [...live, ...expired];
    return promptRuntimeForTurn(policies, injections, branchId);
  },
};

/** The session and branch policies and the live injections of a turn on `branchId`, as it reads them. */
export function promptRuntimeForTurn(
  policies: PromptPolicyRow[],
  injections: PromptInjectionRow[],
  branchId: string,
): PromptRuntimeForTurn {
  return {
    sessionPolicy: policies.find((p) => p.branch_id === null)?.value ?? null,
    branchPolicy: policies.find((p) => p.branch_id === branchId)?.value ?? null,
    injections,
  };
}
