import { newId } from '@hearth/domain';
import {
  variablesRepository,
  type FloorRow,
  type PageRow,
  type StagedWriteRow,
  type Tx,
  type VariablePromotionRow,
  type VariableScopeName,
} from '@hearth/persistence';
import { VARIABLE_ID_PREFIX } from './variable-rules';

/**
 * The page ledger (spec 2 "Staged variable write item", "States and transitions"): a turn stages the
 * macro engine's local writes on its page; at commit they are materialised at page scope (`staged` →
 * `accepted_page_only`) and promoted to the floor (`promoted`, with a trace item). These functions run
 * inside the turn's transaction and bypass the route locks (the floor is `generating` while they run).
 */

export const STAGED_INTENTS = ['promote_to_floor_on_accept', 'page_only'] as const;
export type StagedIntent = (typeof STAGED_INTENTS)[number];
export const CONFLICT_POLICIES = ['replace', 'keep_existing'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

/** The fields of the macro engine's `StagedMutation` this ledger needs. */
export interface StageableMutation {
  scope: 'local' | 'global';
  /** The stored (root) key that changes. */
  key: string;
  /** The name as the macro wrote it. */
  name: string;
  op: string;
  /** The key's value after the write (objects as stable JSON text in the engine's preview). */
  after: unknown;
  deleted: boolean;
  macro: string;
}

export interface StageEvidence {
  runId: string | null;
  generationAttemptNo: number;
}

export interface StageOptions {
  source?: { toolName: string; providerId: string | null };
  intent?: StagedIntent;
  conflictPolicy?: ConflictPolicy;
  /**
   * The engine's local view after the turn (`variablesAfter('local')`): the exact final value of each
   * key, used for the key's last write instead of the preview text (so objects stay objects).
   */
  finalValues?: Record<string, unknown>;
  now?: number;
}

type LedgerPage = Pick<PageRow, 'id' | 'account_id' | 'session_id' | 'floor_id'>;

/**
 * Stages a turn's local-view writes on its page, in order (status `staged`). Writes to the global view
 * are not staged: the five-scope model keeps global variables to the routes (docs/decisions.md
 * "Variables"). Returns the new ledger items.
 */
export async function stageMutations(
  tx: Tx,
  page: LedgerPage,
  mutations: StageableMutation[],
  evidence: StageEvidence,
  options: StageOptions = {},
): Promise<StagedWriteRow[]> {
  const local = mutations.filter((m) => m.scope === 'local');
  if (local.length === 0) return [];
  const floor = await variablesRepository.findFloor(tx, page.account_id, page.floor_id);
  if (!floor) throw new Error(`stageMutations: floor ${page.floor_id} of page ${page.id} not found`);
  const lastIndex = new Map<string, number>();
  local.forEach((m, i) => lastIndex.set(m.key, i));
  const now = options.now ?? Date.now();
  let seq = await variablesRepository.nextStagedSeq(tx, page.id);
  return variablesRepository.insertStagedWrites(
    tx,
    local.map((m, i) => {
      const exact =
        options.finalValues &&
        lastIndex.get(m.key) === i &&
        Object.prototype.hasOwnProperty.call(options.finalValues, m.key);
      const value = m.deleted ? null : exact ? options.finalValues![m.key] : (m.after ?? null);
      return {
        id: newId(VARIABLE_ID_PREFIX.stagedWrite),
        account_id: page.account_id,
        session_id: page.session_id,
        branch_id: floor.branch_id,
        floor_id: page.floor_id,
        page_id: page.id,
        seq: seq++,
        key: m.key,
        op: m.deleted ? 'delete' : m.op,
        value: JSON.stringify(value),
        intent: options.intent ?? 'promote_to_floor_on_accept',
        conflict_policy: options.conflictPolicy ?? 'replace',
        reason: m.name === m.key ? m.macro : `${m.macro} ${m.name}`,
        source: JSON.stringify({
          toolName: options.source?.toolName ?? m.macro,
          providerId: options.source?.providerId ?? null,
        }),
        evidence: JSON.stringify({
          runId: evidence.runId,
          generationAttemptNo: evidence.generationAttemptNo,
        }),
        status: 'staged' as const,
        decision_reason: null,
        created_at: now,
        resolved_at: null,
      };
    }),
  );
}

interface Host {
  scope: VariableScopeName;
  scopeId: string;
  columns: { session_id: string; floor_id: string | null; page_id: string | null };
}

/** Applies one ledger item at a host: upsert, or delete for `delete`. Returns the variable id (or null). */
async function applyAt(tx: Tx, accountId: string, host: Host, item: StagedWriteRow, now: number) {
  if (item.op === 'delete') {
    const existing = await variablesRepository.findByTarget(tx, accountId, host, item.key);
    if (existing) await variablesRepository.delete(tx, existing.id);
    return existing?.id ?? null;
  }
  const { variable } = await variablesRepository.upsert(tx, {
    id: newId(VARIABLE_ID_PREFIX.variable),
    account_id: accountId,
    scope: host.scope,
    scope_id: host.scopeId,
    session_id: host.columns.session_id,
    branch_id: null,
    floor_id: host.columns.floor_id,
    page_id: host.columns.page_id,
    key: item.key,
    value: JSON.stringify(item.value),
    created_at: now,
    updated_at: now,
  });
  return variable.id;
}

const pageHost = (page: LedgerPage): Host => ({
  scope: 'page',
  scopeId: page.id,
  columns: { session_id: page.session_id, floor_id: null, page_id: page.id },
});

/**
 * Page accepted and materialised: every `staged` item of the page is written at page scope, in order,
 * and becomes `accepted_page_only`. Returns the page's ledger after the change.
 */
export async function acceptStagedWrites(
  tx: Tx,
  page: LedgerPage,
  now = Date.now(),
): Promise<StagedWriteRow[]> {
  const items = await variablesRepository.listStagedWrites(tx, page.account_id, page.id, { lock: true });
  for (const item of items) {
    if (item.status !== 'staged') continue;
    await applyAt(tx, page.account_id, pageHost(page), item, now);
    const decision = item.intent === 'page_only' ? 'intent_page_only' : null;
    await variablesRepository.resolveStagedWrite(tx, item.id, {
      status: 'accepted_page_only',
      decision_reason: decision,
      resolved_at: now,
    });
  }
  return variablesRepository.listStagedWrites(tx, page.account_id, page.id);
}

export interface PromotionOutcome {
  items: StagedWriteRow[];
  promotions: VariablePromotionRow[];
}

/**
 * Commit (spec 2 "Commit currently only promotes page to floor"): each `staged` or `accepted_page_only`
 * item whose intent is `promote_to_floor_on_accept` is materialised at page scope if it was still
 * staged, then written at floor scope with a trace item (`promoted`). `page_only` items stop at
 * `accepted_page_only`. With conflict policy `keep_existing` an existing floor value wins: the item
 * stays `accepted_page_only` with decision_reason `floor_value_kept`. The page must belong to the floor.
 */
export async function promoteStagedWrites(
  tx: Tx,
  page: LedgerPage,
  floor: Pick<FloorRow, 'id' | 'account_id' | 'session_id'>,
  now = Date.now(),
): Promise<PromotionOutcome> {
  if (page.floor_id !== floor.id)
    throw new Error(`promoteStagedWrites: page ${page.id} is not on floor ${floor.id}`);
  const accountId = page.account_id;
  const items = await variablesRepository.listStagedWrites(tx, accountId, page.id, { lock: true });
  const floorHost: Host = {
    scope: 'floor',
    scopeId: floor.id,
    columns: { session_id: floor.session_id, floor_id: floor.id, page_id: null },
  };
  const promotions: VariablePromotionRow[] = [];
  for (const item of items) {
    if (item.status === 'promoted') continue;
    let sourceId: string | null;
    if (item.status === 'staged') {
      sourceId = await applyAt(tx, accountId, pageHost(page), item, now);
    } else {
      sourceId =
        (await variablesRepository.findByTarget(tx, accountId, pageHost(page), item.key))?.id ?? null;
    }
    if (item.intent !== 'promote_to_floor_on_accept') {
      await variablesRepository.resolveStagedWrite(tx, item.id, {
        status: 'accepted_page_only',
        decision_reason: 'intent_page_only',
        resolved_at: now,
      });
      continue;
    }
    if (item.conflict_policy === 'keep_existing' && item.op !== 'delete') {
      const existing = await variablesRepository.findByTarget(tx, accountId, floorHost, item.key);
      if (existing) {
        await variablesRepository.resolveStagedWrite(tx, item.id, {
          status: 'accepted_page_only',
          decision_reason: 'floor_value_kept',
          resolved_at: now,
        });
        continue;
      }
    }
    const targetId = await applyAt(tx, accountId, floorHost, item, now);
    promotions.push(
      await variablesRepository.insertPromotion(tx, {
        id: newId(VARIABLE_ID_PREFIX.promotion),
        account_id: accountId,
        page_id: page.id,
        staged_write_id: item.id,
        key: item.key,
        from_scope: 'page',
        from_scope_id: page.id,
        to_scope: 'floor',
        to_scope_id: floor.id,
        conflict_policy: item.conflict_policy,
        source_variable_id: sourceId,
        target_variable_id: targetId,
        value: JSON.stringify(item.value),
        created_at: now,
      }),
    );
    await variablesRepository.resolveStagedWrite(tx, item.id, {
      status: 'promoted',
      decision_reason: null,
      resolved_at: now,
    });
  }
  return { items: await variablesRepository.listStagedWrites(tx, accountId, page.id), promotions };
}
