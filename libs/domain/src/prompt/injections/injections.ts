import type { AnnotatedMessage } from '../assembly/chat-completion';
import type { TokenCounter } from '../shared/token-counter';

/**
 * Persistent and request-level prompt injections (spec 2 "Persistent injection record", "Request-level
 * injection item", "Trace item", placements; docs/decisions.md "Prompt engine: injections"). Planning
 * decides which items may apply (limits, expiry, mode); anchoring places them in the assembled prompt.
 * Nothing here throws: every item ends with `applied` or a `not_applied_reason`.
 */

export type PromptMode = 'compat_strict' | 'compat_plus' | 'native';
export type InjectionSourceKind =
  'client_injection' | 'agent_injection' | 'debug_injection' | 'system_override';
export type InjectionVisibility = 'client' | 'agent_private' | 'debug' | 'system';

export const INJECTION_LIMITS = {
  item_tokens: 2000,
  total_tokens: 4000,
  per_request: 32,
  per_scope: 128,
  content_chars: 8000,
  title_chars: 256,
} as const;

export const COMMON_PLACEMENTS = [
  'before_system_prompt',
  'after_system_prompt',
  'before_character',
  'after_character',
  'before_persona',
  'after_persona',
  'before_worldbook',
  'after_worldbook',
  'before_memory',
  'after_memory',
  'before_examples',
  'after_examples',
  'before_history',
  'after_history',
  'before_current_user_input',
  'after_current_user_input',
  'before_output_instruction',
  'before_assistant_prefill',
] as const;

const ALL_MODES: PromptMode[] = ['compat_strict', 'compat_plus', 'native'];
export const ADVANCED_PLACEMENTS: Record<string, PromptMode[]> = {
  before_floor: ALL_MODES,
  after_floor: ALL_MODES,
  before_floor_from_end: ALL_MODES,
  after_floor_from_end: ALL_MODES,
  worldbook_depth: ['compat_plus', 'native'],
  worldbook_before: ['compat_plus', 'native'],
  worldbook_after: ['compat_plus', 'native'],
  worldbook_author_note_top: ['compat_plus', 'native'],
  before_contributor_block: ['native'],
  after_contributor_block: ['native'],
};

/** Placements that act inside the lorebook, before assembly. */
export const LOREBOOK_PLACEMENTS = new Set([
  'worldbook_depth',
  'worldbook_before',
  'worldbook_after',
  'worldbook_author_note_top',
]);

export const VISIBILITY_OF: Record<InjectionSourceKind, InjectionVisibility> = {
  client_injection: 'client',
  agent_injection: 'agent_private',
  debug_injection: 'debug',
  system_override: 'system',
};

export type NotAppliedReason =
  | 'placement_not_available_in_mode'
  | 'unknown_placement'
  | 'empty_title_or_content'
  | 'prompt_section_absent'
  | 'disabled'
  | 'mode_scope_mismatch'
  | 'expired'
  | 'scope_quota_exceeded'
  | 'content_length_exceeded'
  | 'content_token_limit_exceeded'
  | 'total_token_limit_exceeded'
  | 'missing_placement_params'
  | 'invalid_placement_params'
  | 'floor_no_out_of_history_window'
  | 'floor_offset_out_of_history_window';

export interface InjectionItem {
  id?: string | null;
  scope: 'session' | 'branch' | 'request';
  source_kind: InjectionSourceKind;
  title: string;
  content: string;
  placement: string;
  placement_params?: unknown;
  order?: number;
  enabled?: boolean;
  mode_scope?: PromptMode | null;
  /** ms; persistent records: created_at + ttl_ms. */
  expires_at?: number | null;
  source_chain?: string[] | null;
}

export interface InjectionTraceItem {
  request_index: number;
  source_kind: InjectionSourceKind;
  visibility: InjectionVisibility;
  scope: InjectionItem['scope'];
  placement_requested: string;
  placement_params_requested: unknown;
  order_requested: number;
  title: string | null;
  content_length: number;
  token_count: number;
  budget_group: 'injection';
  budget_status: 'within_budget' | 'rejected_by_item_limit' | 'rejected_by_total_limit' | null;
  applied: boolean;
  placement_resolved: string | null;
  anchor_resolved: string | null;
  source_chain: string[] | null;
  not_applied_reason: NotAppliedReason | null;
  restricted: boolean;
}

export interface InjectionTrace {
  requested_count: number;
  applied_count: number;
  rejected_count: number;
  token_count: number;
  budget_group: 'injection';
  items: InjectionTraceItem[];
}

export interface PlannedInjection {
  index: number;
  item: InjectionItem;
  order: number;
  params: { floor_no?: number; offset?: number; depth?: number };
  trace: InjectionTraceItem;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readParams(
  placement: string,
  raw: unknown,
):
  | { params: PlannedInjection['params'] }
  | { reason: 'missing_placement_params' | 'invalid_placement_params' } {
  const needs: Record<string, keyof PlannedInjection['params']> = {
    before_floor: 'floor_no',
    after_floor: 'floor_no',
    before_floor_from_end: 'offset',
    after_floor_from_end: 'offset',
    worldbook_depth: 'depth',
  };
  if (raw !== undefined && raw !== null && !isObject(raw)) return { reason: 'invalid_placement_params' };
  const params: PlannedInjection['params'] = {};
  for (const key of ['floor_no', 'offset', 'depth'] as const) {
    const value = isObject(raw) ? raw[key] : undefined;
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      return { reason: 'invalid_placement_params' };
    params[key] = value;
  }
  const required = needs[placement];
  if (required && params[required] === undefined) return { reason: 'missing_placement_params' };
  return { params };
}

/**
 * Decides which items may apply: enabled, not expired, in mode, known placement with its parameters,
 * non-empty, within the scope quotas (128 per persistent scope, 32 per request) and the token limits (2000
 * per item, 4000 in total, counted in `order` then list order). Items come in list order: session
 * records, branch records, then the request's.
 */
export function planInjections(
  items: InjectionItem[],
  context: { mode: PromptMode; now: number; tokens: TokenCounter },
): { planned: PlannedInjection[]; trace: InjectionTraceItem[] } {
  const trace: InjectionTraceItem[] = items.map((item, index) => ({
    request_index: index,
    source_kind: item.source_kind,
    visibility: VISIBILITY_OF[item.source_kind] ?? 'system',
    scope: item.scope,
    placement_requested: item.placement,
    placement_params_requested: item.placement_params ?? null,
    order_requested: Number.isInteger(item.order) ? (item.order as number) : 100,
    title: item.title,
    content_length: typeof item.content === 'string' ? item.content.length : 0,
    token_count: 0,
    budget_group: 'injection',
    budget_status: null,
    applied: false,
    placement_resolved: null,
    anchor_resolved: null,
    source_chain: item.source_chain ?? null,
    not_applied_reason: null,
    restricted: false,
  }));
  const candidates: PlannedInjection[] = [];
  const perScope = new Map<string, number>();
  items.forEach((item, index) => {
    const t = trace[index];
    const reject = (reason: NotAppliedReason) => {
      t.not_applied_reason = reason;
    };
    const scopeKey = item.scope;
    const seen = (perScope.get(scopeKey) ?? 0) + 1;
    perScope.set(scopeKey, seen);
    const quota = item.scope === 'request' ? INJECTION_LIMITS.per_request : INJECTION_LIMITS.per_scope;
    if (item.enabled === false) return reject('disabled');
    if (item.expires_at !== undefined && item.expires_at !== null && item.expires_at <= context.now)
      return reject('expired');
    if (item.mode_scope && item.mode_scope !== context.mode) return reject('mode_scope_mismatch');
    if (seen > quota) return reject('scope_quota_exceeded');
    const known =
      (COMMON_PLACEMENTS as readonly string[]).includes(item.placement) ||
      item.placement in ADVANCED_PLACEMENTS;
    if (!known) return reject('unknown_placement');
    if (item.placement in ADVANCED_PLACEMENTS && !ADVANCED_PLACEMENTS[item.placement].includes(context.mode))
      return reject('placement_not_available_in_mode');
    if (
      typeof item.title !== 'string' ||
      typeof item.content !== 'string' ||
      !item.title.trim() ||
      !item.content.trim()
    )
      return reject('empty_title_or_content');
    const params = readParams(item.placement, item.placement_params);
    if ('reason' in params) return reject(params.reason);
    if (item.content.length > INJECTION_LIMITS.content_chars) return reject('content_length_exceeded');
    t.token_count = context.tokens.count(item.content);
    candidates.push({ index, item, order: t.order_requested, params: params.params, trace: t });
  });
  candidates.sort((a, b) => a.order - b.order || a.index - b.index);
  let total = 0;
  const planned: PlannedInjection[] = [];
  for (const c of candidates) {
    if (c.trace.token_count > INJECTION_LIMITS.item_tokens) {
      c.trace.budget_status = 'rejected_by_item_limit';
      c.trace.not_applied_reason = 'content_token_limit_exceeded';
      continue;
    }
    if (total + c.trace.token_count > INJECTION_LIMITS.total_tokens) {
      c.trace.budget_status = 'rejected_by_total_limit';
      c.trace.not_applied_reason = 'total_token_limit_exceeded';
      continue;
    }
    total += c.trace.token_count;
    c.trace.budget_status = 'within_budget';
    planned.push(c);
  }
  return { planned, trace };
}

type Anchor = { index: number; side: 'before' | 'after'; anchor: string } | { reason: NotAppliedReason };

function findAnchor(messages: AnnotatedMessage[], p: PlannedInjection, floorsInWindow: number[]): Anchor {
  const first = (pred: (m: AnnotatedMessage) => boolean) => messages.findIndex(pred);
  const last = (pred: (m: AnnotatedMessage) => boolean) => {
    for (let i = messages.length - 1; i >= 0; i--) if (pred(messages[i])) return i;
    return -1;
  };
  const around = (
    pred: (m: AnnotatedMessage) => boolean,
    side: 'before' | 'after',
    anchor: string,
  ): Anchor => {
    const index = side === 'before' ? first(pred) : last(pred);
    return index < 0 ? { reason: 'prompt_section_absent' } : { index, side, anchor };
  };
  const slotIs =
    (...slots: string[]) =>
    (m: AnnotatedMessage) =>
      slots.includes(m.slot) && !m.injected;
  const placement = p.item.placement;
  const side = placement.startsWith('before') ? 'before' : 'after';
  switch (placement) {
    case 'before_system_prompt':
    case 'after_system_prompt':
      return around((m) => m.slot === 'main' && m.identifier === 'main', side, 'main');
    case 'before_character':
    case 'after_character':
      return around(slotIs('charDescription', 'charPersonality', 'scenario'), side, 'character');
    case 'before_persona':
    case 'after_persona':
      return around(slotIs('personaDescription'), side, 'personaDescription');
    case 'before_worldbook':
    case 'after_worldbook':
      return around(slotIs('worldInfoBefore', 'worldInfoAfter'), side, 'worldbook');
    case 'before_memory':
    case 'after_memory':
      return around((m) => m.identifier === 'memory', side, 'memory');
    case 'before_examples':
    case 'after_examples':
      return around(slotIs('dialogueExamples'), side, 'dialogueExamples');
    case 'before_history':
    case 'after_history':
      return around(slotIs('chatHistory'), side, 'chatHistory');
    case 'before_current_user_input':
    case 'after_current_user_input':
      return around((m) => m.current_input === true, side, 'current_user_input');
    case 'before_output_instruction':
      return around(slotIs('jailbreak'), 'before', 'jailbreak');
    case 'before_assistant_prefill':
      return around(slotIs('prefill'), 'before', 'assistant_prefill');
    case 'before_floor':
    case 'after_floor': {
      const floorNo = p.params.floor_no as number;
      if (!floorsInWindow.includes(floorNo)) return { reason: 'floor_no_out_of_history_window' };
      return around((m) => m.floor_no === floorNo && !m.injected, side, `floor:${floorNo}`);
    }
    case 'before_floor_from_end':
    case 'after_floor_from_end': {
      const offset = p.params.offset as number;
      if (offset >= floorsInWindow.length) return { reason: 'floor_offset_out_of_history_window' };
      const floorNo = floorsInWindow[floorsInWindow.length - 1 - offset];
      return around(
        (m) => m.floor_no === floorNo && !m.injected,
        side === 'before' ? 'before' : 'after',
        `floor:${floorNo}`,
      );
    }
    default:
      // Contributor blocks exist only in native mode and Hearth assembles none yet.
      return { reason: 'prompt_section_absent' };
  }
}

/**
 * Places the planned, non-lorebook injections as system messages next to their anchors (several at one
 * anchor keep their `order`). `floorsInWindow` are the floor numbers of the history that reached the
 * prompt, ascending.
 */
export function anchorInjections(
  messages: AnnotatedMessage[],
  planned: PlannedInjection[],
  floorsInWindow: number[],
  tokens: TokenCounter,
): AnnotatedMessage[] {
  const inserts: Array<{ at: number; after: boolean; rank: number; message: AnnotatedMessage }> = [];
  planned.forEach((p, rank) => {
    if (LOREBOOK_PLACEMENTS.has(p.item.placement)) return;
    const anchor = findAnchor(messages, p, floorsInWindow);
    if ('reason' in anchor) {
      p.trace.not_applied_reason = anchor.reason;
      return;
    }
    p.trace.applied = true;
    p.trace.placement_resolved = p.item.placement;
    p.trace.anchor_resolved = anchor.anchor;
    inserts.push({
      at: anchor.side === 'before' ? anchor.index : anchor.index + 1,
      after: anchor.side === 'after',
      rank,
      message: {
        role: 'system',
        content: p.item.content,
        identifier: `injection:${p.index}`,
        slot: 'injection',
        tokens: tokens.count(p.item.content) + 4,
        injected: true,
      },
    });
  });
  const out: AnnotatedMessage[] = [];
  for (let i = 0; i <= messages.length; i++) {
    // At one gap, "after X" texts stay next to X, then "before Y" texts; each group keeps its order.
    const here = inserts
      .filter((x) => x.at === i)
      .sort((a, b) => Number(b.after) - Number(a.after) || a.rank - b.rank);
    for (const ins of here) out.push(ins.message);
    if (i < messages.length) out.push(messages[i]);
  }
  return out;
}

/** The `runtime_trace.injection` summary. */
export function summariseInjections(items: InjectionTraceItem[]): InjectionTrace {
  const applied = items.filter((i) => i.applied);
  return {
    requested_count: items.length,
    applied_count: applied.length,
    rejected_count: items.length - applied.length,
    token_count: applied.reduce((n, i) => n + i.token_count, 0),
    budget_group: 'injection',
    items,
  };
}

/**
 * Restricted sources (`agent_private`, `debug`, `system`) lose title and source chain in every view
 * except an owner's inspect with `include_restricted_injection_content`.
 */
export function trimInjectionTrace(
  items: InjectionTraceItem[],
  includeRestricted = false,
): InjectionTraceItem[] {
  return items.map((item) => {
    if (item.visibility === 'client') return { ...item, restricted: false };
    if (includeRestricted) return { ...item, restricted: true };
    return { ...item, title: null, source_chain: null, restricted: true };
  });
}
