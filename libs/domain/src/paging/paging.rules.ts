import { createHash } from 'node:crypto';
import { DomainError } from '../errors';

/**
 * Paging rules shared by the list routes.
 *
 * Cursor lists (spec 1: `GET /projects`, `GET /projects/:id/sessions`, derived outputs) use keyset
 * paging: the cursor is an opaque base64url token holding the sort key of the last item sent and a
 * fingerprint of the list it belongs to (the route, the Project, the filters). A cursor that does not
 * decode, or that was issued by another list or with other filters, answers 400 `invalid_cursor`.
 *
 * Offset lists (spec 2 and 3 `{data, meta}` routes) use `limit` and `offset` with `meta.total`.
 */

/** Page sizes of spec 1 "Limits" (Project and session lists) and spec 2/3 lists: default 50, max 200. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
/** A cursor longer than this is never one we issued. */
export const MAX_CURSOR_LENGTH = 512;

const CURSOR_VERSION = 1;

/** The identity of one list: its name plus everything that changes which rows it holds. */
export interface CursorScope {
  list: string;
  params?: Record<string, string | number | boolean | null | undefined>;
}

/** The sort key of the last item of a page, in the list's order (for example `[created_at, id]`). */
export type CursorKey = Array<string | number>;

function fingerprint(scope: CursorScope): string {
  const params = Object.entries(scope.params ?? {})
    .filter(([, value]) => value !== undefined && value !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${String(value)}`)
    .join('&');
  return createHash('sha256').update(`${scope.list}?${params}`).digest('base64url').slice(0, 16);
}

export function encodeCursor(scope: CursorScope, key: CursorKey): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, s: fingerprint(scope), k: key })).toString(
    'base64url',
  );
}

const invalidCursor = () =>
  new DomainError(
    'invalid_cursor',
    400,
    'The cursor is malformed or belongs to another list; send a next_cursor of the same list',
  );

/**
 * The key of a cursor issued for this list, checked against the expected shape (one entry per sort
 * column, each a string or a finite number as given by `shape`). Anything else: 400 `invalid_cursor`.
 */
export function decodeCursor(
  cursor: string,
  scope: CursorScope,
  shape: ReadonlyArray<'string' | 'number'>,
): CursorKey {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalidCursor();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidCursor();
  const { v, s, k } = parsed as Record<string, unknown>;
  if (v !== CURSOR_VERSION || s !== fingerprint(scope) || !Array.isArray(k) || k.length !== shape.length) {
    throw invalidCursor();
  }
  k.forEach((value, i) => {
    const ok =
      shape[i] === 'number'
        ? typeof value === 'number' && Number.isFinite(value)
        : typeof value === 'string' && value.length > 0 && value.length <= 200;
    if (!ok) throw invalidCursor();
  });
  return k as CursorKey;
}

export interface CursorPage<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * Cuts a page from rows fetched with `limit + 1`: the extra row only tells that more follow, and the
 * cursor points after the last row actually returned.
 */
export function cursorPage<T>(
  rows: T[],
  limit: number,
  scope: CursorScope,
  keyOf: (row: T) => CursorKey,
): CursorPage<T> {
  const items = rows.slice(0, limit);
  const more = rows.length > limit && items.length > 0;
  return { items, next_cursor: more ? encodeCursor(scope, keyOf(items[items.length - 1])) : null };
}

export interface OffsetMeta {
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export function offsetMeta(total: number, limit: number, offset: number): OffsetMeta {
  return { total, limit, offset, has_more: offset + limit < total };
}
