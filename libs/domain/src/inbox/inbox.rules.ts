import { DomainError, validationError } from '../errors';
import { serialiseValue, type SerialisedValue } from '../derived-outputs/derived-output.rules';

/**
 * Project inbox rules (spec 1 names the inbox; the design is in docs/decisions.md "Inbox"): the
 * decision table, the field limits and the body checks. Pure: no I/O.
 */
export const INBOX_ENTRY_STATUSES = ['pending', 'accepted', 'rejected'] as const;
export type InboxEntryStatus = (typeof INBOX_ENTRY_STATUSES)[number];

export const INBOX_DECISIONS = ['accepted', 'rejected'] as const;
export type InboxDecision = (typeof INBOX_DECISIONS)[number];

export const INBOX_KIND_MAX_CHARS = 128;
export const INBOX_TITLE_MAX_CHARS = 200;
export const INBOX_REASON_MAX_CHARS = 2000;
/** Serialised UTF-8 size limit of `body`: 64 KiB. */
export const INBOX_BODY_MAX_BYTES = 64 * 1024;
export const INBOX_LIST_DEFAULT_LIMIT = 50;
export const INBOX_LIST_MAX_LIMIT = 200;

const fieldError = (field: string, problem: string) =>
  validationError(problem, { fields: [{ field, problems: [problem] }] });

/** A string of `min`-`max` characters (Unicode code points) without NUL characters. */
function requireText(field: string, value: unknown, min: number, max: number): string {
  if (typeof value !== 'string') throw fieldError(field, `${field} must be a string`);
  const length = [...value].length;
  if (length < min || length > max) throw fieldError(field, `${field} must be ${min}-${max} characters`);
  if (value.includes('\u0000')) throw fieldError(field, `${field} must not contain NUL characters`);
  return value;
}

/** `kind`: a caller-defined category, 1-128 characters (like a derived output's domain). */
export const requireInboxKind = (kind: unknown): string => requireText('kind', kind, 1, INBOX_KIND_MAX_CHARS);

/** `title`: 1-200 characters. */
export const requireInboxTitle = (title: unknown): string =>
  requireText('title', title, 1, INBOX_TITLE_MAX_CHARS);

/** `reason` of a decision: absent or null means none; otherwise 1-2000 characters. */
export function inboxDecisionReason(reason: unknown): string | null {
  if (reason === undefined || reason === null) return null;
  return requireText('reason', reason, 1, INBOX_REASON_MAX_CHARS);
}

/**
 * Checks and serialises an entry's `body` with the derived output value checks (plain JSON, no NUL,
 * finite numbers, at most 128 levels), under the inbox's own codes: 400 `inbox_entry_payload_invalid`,
 * 413 `inbox_entry_payload_too_large` over 64 KiB serialised.
 */
export function serialiseInboxBody(body: unknown): SerialisedValue {
  try {
    return serialiseValue(body, INBOX_BODY_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.code === 'derived_output_payload_too_large') {
      const details = error.details as { value_byte_count: number; max_bytes: number };
      throw new DomainError(
        'inbox_entry_payload_too_large',
        413,
        `body is ${details.value_byte_count} bytes serialised; the limit is ${details.max_bytes}`,
        { body_byte_count: details.value_byte_count, max_bytes: details.max_bytes },
      );
    }
    if (error.code === 'derived_output_payload_invalid') {
      throw new DomainError('inbox_entry_payload_invalid', 400, error.message.replace(/^value/, 'body'));
    }
    throw error;
  }
}

/**
 * The decision table: a `pending` entry moves once, to `accepted` or `rejected`; any decision on a
 * decided entry (the same one included) is 409 `inbox_entry_already_decided`.
 */
export function decideInboxEntry(current: InboxEntryStatus, decision: InboxDecision): InboxDecision {
  if (current !== 'pending') {
    throw new DomainError('inbox_entry_already_decided', 409, `The inbox entry is already ${current}`, {
      status: current,
    });
  }
  return decision;
}

export type InboxWriteAction = 'create' | 'decide';

/** Operation log action and Project event type of each inbox write. */
export const INBOX_WRITE_NAMES: Record<InboxWriteAction, { log: string; event: string }> = {
  create: { log: 'inbox_entry.create', event: 'inbox_entry.created' },
  decide: { log: 'inbox_entry.decide', event: 'inbox_entry.decided' },
};
