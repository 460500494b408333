import { isPlainObject } from '../formats/format.rules';
import { toStorableText } from '../text/storable-text';
import type { AgentOutputTarget } from './agent.rules';

/**
 * One run of an Agent Job (spec 1 "Agent Job"; docs/decisions.md "Agents: runs"): what the job's
 * payload says, the reply's parsing, the output targets it writes or skips, and the names of what it
 * writes. Pure: no I/O.
 */

/** The phases a run moves through (the job's `phase`). */
export const AGENT_RUN_PHASES = ['context', 'model', 'deliver'] as const;
export type AgentRunPhase = (typeof AGENT_RUN_PHASES)[number];

/** Items of each `grants.reads` read: the last events, transcript messages and derived outputs. */
export const AGENT_RUN_READ_LIMIT = 20;
/** A derived output's value in the context is shown whole up to this size, else as a size only. */
export const AGENT_RUN_CONTEXT_VALUE_MAX_BYTES = 4 * 1024;
/** The job's `result.output` is the output itself up to this size, else a truncated view. */
export const AGENT_RUN_OUTPUT_VIEW_MAX_BYTES = 16 * 1024;
/** How long one model call of a run may take. */
export const AGENT_RUN_MODEL_TIMEOUT_MS = 120_000;

/** The system message when the effective metadata has no `instructions` string. */
export const DEFAULT_AGENT_INSTRUCTIONS =
  'You are a background agent of a roleplay conversation service. The user message is a JSON document ' +
  'describing what triggered you and what you may read. Answer with exactly one JSON object and nothing else.';

/** The targets this build writes, in this order; the other allowed targets are reported as skipped. */
export const AGENT_WRITABLE_TARGETS = ['derived_output', 'project_inbox', 'page_staged_write'] as const;
export type AgentWritableTarget = (typeof AGENT_WRITABLE_TARGETS)[number];

export interface AgentRunPayload {
  input_json: Record<string, unknown>;
  trigger_reason: string | null;
  session_id: string | null;
  floor_id: string | null;
}

const optionalString = (value: unknown): string | null =>
  typeof value === 'string' && value.length > 0 ? value : null;

/** The `agent.run` job payload (manual runs and the event trigger write it): anything missing is empty. */
export function readAgentRunPayload(payload: unknown): AgentRunPayload {
  const p = isPlainObject(payload) ? payload : {};
  return {
    input_json: isPlainObject(p.input_json) ? p.input_json : {},
    trigger_reason: optionalString(p.trigger_reason),
    session_id: optionalString(p.session_id),
    floor_id: optionalString(p.floor_id),
  };
}

const FENCED_JSON = /```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```/i;

/**
 * The model's reply as the run's output: the reply parsed as JSON, else the first fenced block
 * (```json or ```) parsed as JSON, else `{text: <reply>}`. An unpaired surrogate (a `\ud83d` escape
 * without its other half) becomes U+FFFD: Postgres' jsonb refuses it, so the result and the writes
 * of the run would fail on it at every attempt.
 */
export function parseAgentReply(reply: string): unknown {
  const parsed = tryParse(reply.trim());
  if (parsed.ok) return wellFormedJson(parsed.value);
  const fenced = FENCED_JSON.exec(reply);
  if (fenced) {
    const inner = tryParse(fenced[1].trim());
    if (inner.ok) return wellFormedJson(inner.value);
  }
  return { text: wellFormed(reply) };
}

const UNPAIRED_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const wellFormed = (text: string): string => text.replace(UNPAIRED_SURROGATES, '\ufffd');

/** Parsed JSON with every string and key well-formed UTF-16. */
function wellFormedJson(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value);
  if (Array.isArray(value)) return value.map(wellFormedJson);
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormedJson(v)]));
  return value;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.length === 0) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const utf8 = new TextEncoder();

/** The UTF-8 size of a value's JSON text. */
export const jsonByteCount = (value: unknown): number => utf8.encode(JSON.stringify(value) ?? 'null').length;

/**
 * A value as a run's result shows it: itself up to `maxBytes` of JSON, else `{truncated: true,
 * byte_count, preview}` where `preview` is the start of its JSON text (at most `maxBytes`, cut on a
 * character boundary).
 */
export function truncatedView(value: unknown, maxBytes = AGENT_RUN_OUTPUT_VIEW_MAX_BYTES): unknown {
  const json = JSON.stringify(value) ?? 'null';
  const bytes = utf8.encode(json);
  if (bytes.length <= maxBytes) return value;
  const preview = new TextDecoder('utf-8').decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD+$/, '');
  return { truncated: true, byte_count: bytes.length, preview };
}

export interface SkippedTarget {
  target: string;
  /**
   * `not_supported`: this build does not write it; `not_allowed`: withdrawn from the grants since the
   * job was made; `no_target_page` (`page_staged_write`): the job names no floor, or its floor has no
   * committed reply page.
   */
  reason: 'not_supported' | 'not_allowed' | 'no_target_page';
}

export interface DeliveryPlan {
  /** What the run writes, in this order (a derived output first, so an inbox entry can point at it). */
  write: AgentWritableTarget[];
  skipped: SkippedTarget[];
}

/**
 * The targets a run writes: the job's `delivery_targets` that the binding still allows now (its
 * effective `allowed_output_targets`), of those this build writes; the rest are skipped with the reason.
 */
export function planAgentDelivery(
  deliveryTargets: readonly string[],
  allowedTargets: readonly AgentOutputTarget[],
): DeliveryPlan {
  const declared = [...new Set(deliveryTargets)];
  const skipped: SkippedTarget[] = [];
  for (const target of declared) {
    if (!(allowedTargets as readonly string[]).includes(target))
      skipped.push({ target, reason: 'not_allowed' });
    else if (!(AGENT_WRITABLE_TARGETS as readonly string[]).includes(target))
      skipped.push({ target, reason: 'not_supported' });
  }
  const write = AGENT_WRITABLE_TARGETS.filter(
    (target) => declared.includes(target) && (allowedTargets as readonly string[]).includes(target),
  );
  return { write, skipped };
}

const codePoints = (value: string) => [...value].length;

const textWithin = (value: unknown, max: number): string | null =>
  typeof value === 'string' && codePoints(value) >= 1 && codePoints(value) <= max && !value.includes('\u0000')
    ? value
    : null;

const cut = (value: string, max: number) => [...value].slice(0, max).join('');

export interface AgentWriteNames {
  /** The derived output's `domain` (1-128): `metadata.output_domain`, else `agent.<type key>`. */
  domain: string;
  /** The derived output's status: `metadata.output_status` (`draft`/`published`), else `published`. */
  status: 'draft' | 'published';
  /** The inbox entry's `kind` (1-128): `metadata.inbox_kind`, else `agent.<type key>`. */
  inboxKind: string;
  /** The inbox entry's `title` (1-200): `metadata.inbox_title`, else the type's name. */
  inboxTitle: string;
  /** A page candidate's `reason` (1-2,000): `metadata.staged_write_reason`, else `agent.<type key>`. */
  stagedWriteReason: string;
}

/** How a run names what it writes, from the binding's effective metadata and its Agent Type. */
export function agentWriteNames(
  metadata: Record<string, unknown>,
  type: { key: string; name: string },
): AgentWriteNames {
  const fallback = cut(`agent.${type.key}`, 128);
  return {
    domain: textWithin(metadata.output_domain, 128) ?? fallback,
    status: metadata.output_status === 'draft' ? 'draft' : 'published',
    inboxKind: textWithin(metadata.inbox_kind, 128) ?? fallback,
    inboxTitle: textWithin(metadata.inbox_title, 200) ?? (cut(type.name, 200) || fallback),
    stagedWriteReason: textWithin(metadata.staged_write_reason, 2000) ?? fallback,
  };
}

/** The roles a page candidate's message may have. */
const CANDIDATE_ROLES = new Set(['assistant', 'user', 'system']);
/** At most this many messages in one page candidate. */
export const PAGE_CANDIDATE_MAX_MESSAGES = 100;

export interface CandidateMessage {
  role: string;
  content: string;
}

/**
 * The messages of a page candidate an agent run stages (`page_staged_write`): the output's `messages`
 * when it is 1-100 items of `{role: assistant|user|system, content: string}`; else one assistant
 * message with the output's `text`, `content` (strings), the output itself when it is a string, or
 * its JSON text. Texts are made storable (NUL and unpaired surrogates become U+FFFD).
 */
export function candidateMessages(output: unknown): CandidateMessage[] {
  const assistant = (content: string) => [{ role: 'assistant', content: toStorableText(content) }];
  if (typeof output === 'string') return assistant(output);
  if (!isPlainObject(output)) return assistant(JSON.stringify(output) ?? 'null');
  const { messages } = output;
  if (
    Array.isArray(messages) &&
    messages.length >= 1 &&
    messages.length <= PAGE_CANDIDATE_MAX_MESSAGES &&
    messages.every(
      (m) => isPlainObject(m) && typeof m.content === 'string' && CANDIDATE_ROLES.has(m.role as string),
    )
  )
    return (messages as Array<{ role: string; content: string }>).map((m) => ({
      role: m.role,
      content: toStorableText(m.content),
    }));
  if (typeof output.text === 'string') return assistant(output.text);
  if (typeof output.content === 'string') return assistant(output.content);
  return assistant(JSON.stringify(output));
}

/** The run's system message: `metadata.instructions` when it is a non-empty string, else the default. */
export const agentInstructions = (metadata: Record<string, unknown>): string =>
  typeof metadata.instructions === 'string' && metadata.instructions.trim().length > 0
    ? metadata.instructions
    : DEFAULT_AGENT_INSTRUCTIONS;
