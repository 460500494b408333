import { sql, type Insertable, type Selectable } from 'kysely';
import { compiledOnce } from './compiled-once';
import type { Db, Executor, Tx } from './database';
import { bumpLlmResolutionVersion, type LlmProfileRow } from './llm-profiles.repository';
import type { LlmProfileOverrideRow } from './project-settings.repository';
import type { LlmProfileBindingsTable } from './tables';

export type LlmBindingRow = Selectable<LlmProfileBindingsTable>;

export interface LlmBindingKey {
  accountId: string;
  scope: LlmBindingRow['scope'];
  /** `global`, or the session id. */
  scopeId: string;
  slot: LlmBindingRow['instance_slot'];
}

/** What the one statement of a cold turn resolution read (docs/decisions.md "Model profiles: resolution cache"). */
export interface TurnResolutionRows {
  /** False: no session with this id in the account (the resolver answers 404). */
  found: boolean;
  /** The account's resolution version in the statement's snapshot (0 before the first write). */
  version: number;
  /** The account's global bindings and the session's bindings (every slot), global first, then by slot. */
  bindings: Array<{ binding: LlmBindingRow; profile: LlmProfileRow | null }>;
  /** The Project LLM override of the session's Project, with its base profile unless that is deleted. */
  override: {
    override: LlmProfileOverrideRow;
    project: { id: string; account_id: string };
    profile: LlmProfileRow | null;
  } | null;
  /** The profile whose `last_used_at` the statement set (the expected winner), or null. */
  touchedProfileId: string | null;
}

interface TurnResolutionRow {
  project_id: string | null;
  version: number;
  touched: string | null;
  bindings: TurnResolutionRows['bindings'] | null;
  override: TurnResolutionRows['override'];
}

/**
 * The cold path of a turn's slot resolution in one round trip: the session (scoped by account), the
 * account's resolution version, the global and the session's bindings joined to their profiles, and
 * the Project override with its base profile, all in one snapshot. It also sets `last_used_at` of the
 * profile the slot is expected to resolve to (the highest of session slot > session `*` > Project
 * override > global slot > global `*` whose profile is not deleted, when that profile is active and
 * `touch` is `t`); the resolver corrects it in the rare case a key turns out unreadable. The touch is
 * committed asynchronously (`synchronous_commit` off for this statement's transaction only): a crash
 * may lose the last fraction of a second of `last_used_at` values, nothing else is written.
 * Values: session id, account id, slot, now (ms), touch (`t`/`f`).
 */
const loadTurnResolution = compiledOnce(
  (db, sessionId: string, accountId: string, slot: string, now: string, touch: string) => ({
    compile: () =>
      sql<TurnResolutionRow>`
      WITH s AS (
        SELECT se.id, se.project_id FROM sessions se WHERE se.id = ${sessionId} AND se.account_id = ${accountId}
      ),
      ver AS (
        SELECT COALESCE(
          (SELECT v.version FROM llm_resolution_versions v WHERE v.account_id = ${accountId}), 0
        ) AS version
      ),
      b AS (
        SELECT lb.scope, lb.instance_slot, lb.profile_id, row_to_json(lb) AS binding
        FROM llm_profile_bindings lb
        WHERE lb.account_id = ${accountId} AND lb.scope = 'global' AND lb.scope_id = 'global'
        UNION ALL
        SELECT lb.scope, lb.instance_slot, lb.profile_id, row_to_json(lb) AS binding
        FROM llm_profile_bindings lb
        WHERE lb.account_id = ${accountId} AND lb.scope = 'session' AND lb.scope_id = ${sessionId}
      ),
      bp AS (
        SELECT b.scope, b.instance_slot, b.binding, p.id AS pid, p.status AS pstatus, row_to_json(p) AS profile
        FROM s
        CROSS JOIN b
        LEFT JOIN llm_profiles p ON p.id = b.profile_id AND p.account_id = ${accountId}
      ),
      ov AS (
        SELECT p.id AS pid, p.status AS pstatus,
          json_build_object(
            'override', row_to_json(lo),
            'project', json_build_object('id', pr.id, 'account_id', pr.account_id),
            'profile', row_to_json(p)
          ) AS doc
        FROM s
        JOIN projects pr ON pr.id = s.project_id
        JOIN project_llm_profile_overrides lo ON lo.project_id = pr.id
        LEFT JOIN llm_profiles p
          ON p.id = lo.base_profile_id AND p.account_id = pr.account_id AND p.status <> 'deleted'
      ),
      cand AS (
        SELECT bp.pid,
          CASE WHEN bp.scope = 'session' THEN (CASE WHEN bp.instance_slot = ${slot} THEN 1 ELSE 2 END)
               ELSE (CASE WHEN bp.instance_slot = ${slot} THEN 4 ELSE 5 END) END AS rank
        FROM bp
        WHERE bp.instance_slot IN (${slot}, '*') AND bp.pid IS NOT NULL AND bp.pstatus <> 'deleted'
        UNION ALL
        SELECT ov.pid, 3 AS rank FROM ov WHERE ov.pid IS NOT NULL AND ov.pstatus = 'active'
      ),
      t AS (
        UPDATE llm_profiles SET last_used_at = ${now}::bigint
        WHERE ${touch} = 't'
          AND id = (SELECT cand.pid FROM cand ORDER BY cand.rank LIMIT 1)
          AND status = 'active'
        RETURNING id
      )
      SELECT
        (SELECT s.project_id FROM s) AS project_id,
        (SELECT ver.version FROM ver) AS version,
        (SELECT t.id FROM t) AS touched,
        (SELECT json_agg(json_build_object('binding', bp.binding, 'profile', bp.profile)
           ORDER BY bp.scope, bp.instance_slot) FROM bp) AS bindings,
        (SELECT ov.doc FROM ov) AS override,
        set_config('synchronous_commit', 'off', true) AS async_commit`.compile(db),
  }),
);

/**
 * The cached path of a turn's slot resolution in one round trip: whether the session still exists in
 * the account, the account's resolution version, and, only when that version is still the cached one,
 * `last_used_at` of the cached profile when it is older than `touchBefore` (at most one write per
 * profile per interval; committed asynchronously like the cold statement's).
 * Values: session id, account id, cached version, profile id ('' for none), now, touchBefore (ms).
 */
const checkTurnResolution = compiledOnce(
  (
    db,
    sessionId: string,
    accountId: string,
    version: string,
    profileId: string,
    now: string,
    touchBefore: string,
  ) => ({
    compile: () =>
      sql<{ found: boolean; version: number; touched: number }>`
      WITH s AS (
        SELECT se.id FROM sessions se WHERE se.id = ${sessionId} AND se.account_id = ${accountId}
      ),
      ver AS (
        SELECT COALESCE(
          (SELECT v.version FROM llm_resolution_versions v WHERE v.account_id = ${accountId}), 0
        ) AS version
      ),
      t AS (
        UPDATE llm_profiles SET last_used_at = ${now}::bigint
        WHERE id = ${profileId}
          AND status = 'active'
          AND (last_used_at IS NULL OR last_used_at <= ${touchBefore}::bigint)
          AND EXISTS (SELECT 1 FROM s)
          AND (SELECT ver.version FROM ver) = ${version}::bigint
        RETURNING id
      )
      SELECT
        EXISTS (SELECT 1 FROM s) AS found,
        (SELECT ver.version FROM ver) AS version,
        (SELECT count(*) FROM t)::int AS touched,
        set_config('synchronous_commit', 'off', true) AS async_commit`.compile(db),
  }),
);

/** Named queries for LLM profile bindings (docs/decisions.md "Model profiles"). Every query is scoped by account. */
export const llmBindingsRepository = {
  /** See `llmProfilesRepository.bumpResolutionVersion`. */
  async bumpResolutionVersion(tx: Tx, accountId: string): Promise<void> {
    await bumpLlmResolutionVersion(tx, accountId);
  },

  /**
   * The cold path of a turn's slot resolution (one statement; see `loadTurnResolution` above). Not
   * for use inside a transaction: it switches the transaction to asynchronous commit.
   */
  async loadTurnResolution(
    db: Db,
    input: { sessionId: string; accountId: string; slot: string; now: number; touch: boolean },
  ): Promise<TurnResolutionRows> {
    const [row] = await loadTurnResolution(
      db,
      input.sessionId,
      input.accountId,
      input.slot,
      String(input.now),
      input.touch ? 't' : 'f',
    );
    return {
      found: row.project_id !== null,
      version: Number(row.version),
      bindings: row.bindings ?? [],
      override: row.override ?? null,
      touchedProfileId: row.touched,
    };
  },

  /**
   * The cached path of a turn's slot resolution (one statement; see `checkTurnResolution` above).
   * Not for use inside a transaction (asynchronous commit).
   */
  async checkTurnResolution(
    db: Db,
    input: {
      sessionId: string;
      accountId: string;
      version: number;
      profileId: string | null;
      now: number;
      touchBefore: number;
    },
  ): Promise<{ found: boolean; version: number; touched: boolean }> {
    const [row] = await checkTurnResolution(
      db,
      input.sessionId,
      input.accountId,
      String(input.version),
      input.profileId ?? '',
      String(input.now),
      String(input.touchBefore),
    );
    return { found: row.found, version: Number(row.version), touched: row.touched > 0 };
  },

  async find(db: Executor, key: LlmBindingKey): Promise<LlmBindingRow | undefined> {
    return db
      .selectFrom('llm_profile_bindings')
      .selectAll()
      .where('account_id', '=', key.accountId)
      .where('scope', '=', key.scope)
      .where('scope_id', '=', key.scopeId)
      .where('instance_slot', '=', key.slot)
      .executeTakeFirst();
  },

  /** Inserts or replaces the binding of (account, scope, scope_id, slot); id and created_at are kept. */
  async upsert(db: Executor, row: Insertable<LlmProfileBindingsTable>): Promise<LlmBindingRow> {
    return db
      .insertInto('llm_profile_bindings')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'scope', 'scope_id', 'instance_slot']).doUpdateSet((eb) => ({
          profile_id: eb.ref('excluded.profile_id'),
          params: eb.ref('excluded.params'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Deletes the binding; false when it was already gone (a concurrent unbind got there first). */
  async delete(db: Executor, id: string): Promise<boolean> {
    const result = await db.deleteFrom('llm_profile_bindings').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /**
   * The bindings a resolution looks at: the account's global bindings and, with a session, that
   * session's bindings.
   */
  async listForResolution(
    db: Executor,
    accountId: string,
    sessionId: string | null,
  ): Promise<LlmBindingRow[]> {
    return db
      .selectFrom('llm_profile_bindings')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) =>
        sessionId === null
          ? eb('scope', '=', 'global')
          : eb.or([
              eb('scope', '=', 'global'),
              eb.and([eb('scope', '=', 'session'), eb('scope_id', '=', sessionId)]),
            ]),
      )
      .execute();
  },

  /** Bindings that reference a profile, by scope. */
  async countByProfile(db: Executor, profileId: string): Promise<{ global: number; session: number }> {
    const rows = await db
      .selectFrom('llm_profile_bindings')
      .select(['scope', (eb) => eb.fn.countAll<string>().as('count')])
      .where('profile_id', '=', profileId)
      .groupBy('scope')
      .execute();
    const count = (scope: string) => Number(rows.find((r) => r.scope === scope)?.count ?? 0);
    return { global: count('global'), session: count('session') };
  },

  /**
   * Removes the profile's session bindings whose session no longer exists (spec 2: a profile DELETE
   * first clears stale session bindings). The session foreign key already cascades, so this is a
   * safety net; returns how many were removed.
   */
  async deleteStaleSessionBindings(db: Executor, profileId: string): Promise<number> {
    const result = await db
      .deleteFrom('llm_profile_bindings')
      .where('profile_id', '=', profileId)
      .where('scope', '=', 'session')
      .where((eb) =>
        eb.or([
          eb('session_id', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('sessions')
                .select('sessions.id')
                .whereRef('sessions.id', '=', 'llm_profile_bindings.session_id'),
            ),
          ),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
