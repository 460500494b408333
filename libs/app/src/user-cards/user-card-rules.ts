import { DomainError, serialiseValue, validationError } from '@hearth/domain';
import type { UserCardRow } from '@hearth/persistence';

/** `snapshot.name`: 1-200 characters (Unicode code points), not blank, no NUL. */
export const USER_CARD_NAME_MAX_CHARS = 200;
/** A snapshot is at most 256 KiB serialised (UTF-8 bytes); a persona is a short text. */
export const USER_CARD_SNAPSHOT_MAX_BYTES = 256 * 1024;
/** Batch routes take 1-100 unique ids (spec 3 "Limits"). */
export const USER_CARD_BATCH_MAX_IDS = 100;

const fieldError = (field: string, problem: string) =>
  validationError(`${field} ${problem}`, { fields: [{ field, problems: [`${field} ${problem}`] }] });

export interface CheckedUserCardSnapshot {
  name: string;
  value: Record<string, unknown>;
  /** The snapshot serialised, ready for the jsonb column. */
  json: string;
}

/**
 * A user card snapshot (spec 3 "User card"): a plain JSON object (no NUL, finite numbers, at most 128
 * levels, 256 KiB) with a non-blank string `name` of 1-200 characters and, when present, a string (or
 * null) `description`. Every other field is kept as given. Failures are 400 `validation_error` naming
 * the field.
 */
export function checkUserCardSnapshot(snapshot: unknown): CheckedUserCardSnapshot {
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot))
    throw fieldError('snapshot', 'must be an object');
  const value = snapshot as Record<string, unknown>;
  const name = value.name;
  if (typeof name !== 'string') throw fieldError('snapshot.name', 'must be a string');
  const length = [...name].length;
  if (length < 1 || length > USER_CARD_NAME_MAX_CHARS || !/\S/.test(name))
    throw fieldError('snapshot.name', `must be 1-${USER_CARD_NAME_MAX_CHARS} characters and not blank`);
  if (name.includes('\u0000')) throw fieldError('snapshot.name', 'must not contain NUL characters');
  if (value.description !== undefined && value.description !== null && typeof value.description !== 'string')
    throw fieldError('snapshot.description', 'must be a string');
  try {
    const { json } = serialiseValue(value, USER_CARD_SNAPSHOT_MAX_BYTES);
    return { name, value, json };
  } catch (error) {
    if (error instanceof DomainError && error.code === 'derived_output_payload_too_large')
      throw fieldError('snapshot', `must be at most ${USER_CARD_SNAPSHOT_MAX_BYTES} bytes serialised`);
    if (error instanceof DomainError && error.code === 'derived_output_payload_invalid')
      throw fieldError('snapshot', error.message.replace(/^value /, ''));
    throw error;
  }
}

/** Missing, of another account, or soft-deleted: 404 `not_found` (spec 3 "Errors", Users). */
export const userCardNotFound = () => new DomainError('not_found', 404, 'User card not found');

/** Another live card of the account has the name: 409 `user_conflict`. */
export const userCardNameConflict = (name: string) =>
  new DomainError('user_conflict', 409, 'A user card with this name already exists', { name });

/** `expected_revision` is not the card's revision: 409 `user_revision_conflict`. */
export function requireUserCardRevision(card: UserCardRow, expected: number | undefined | null): void {
  if (expected === undefined || expected === null || expected === card.revision) return;
  throw new DomainError(
    'user_revision_conflict',
    409,
    `expected_revision ${expected} is stale; the user card is at revision ${card.revision}`,
    { expected_revision: expected, current_revision: card.revision },
  );
}

/** What an operation log keeps of a card (never the snapshot). */
export const userCardRef = (card: UserCardRow) => ({
  id: card.id,
  name: card.name,
  status: card.status,
  revision: card.revision,
});
