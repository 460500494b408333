/**
 * Turns a database driver failure into what the caller should be told. Postgres SQLSTATE codes:
 * 22021/22P05 a NUL character in text or JSON, and 22P02 naming a surrogate an unpaired UTF-16
 * surrogate in JSON, and 22003 a number past what its column or the query can hold (bad input, not a
 * server fault); 40001/40P01 a
 * serialisation failure or deadlock and 55P03 a lock timeout (busy: retry later); class 08, 57P01-57P03
 * and refused connections (the database is unreachable or restarting); 23503 on an `*_account_id_fkey`
 * constraint a row written for an account deleted meanwhile (the caller's account is gone).
 */
export type DatabaseErrorKind = 'invalid_text' | 'out_of_range' | 'busy' | 'unavailable' | 'account_gone';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
]);

export function classifyDatabaseError(error: unknown): DatabaseErrorKind | null {
  if (!error || typeof error !== 'object') return null;
  const code = (error as { code?: unknown }).code;
  const message = (error as { message?: unknown }).message;
  if (typeof code === 'string') {
    if (code === '22021' || code === '22P05') return 'invalid_text';
    // A JSON parameter holding an unpaired UTF-16 surrogate (JSON.stringify writes it as `\udXXX`).
    if (code === '22P02' && /surrogate/i.test(String((error as { detail?: unknown }).detail ?? message)))
      return 'invalid_text';
    if (code === '22003') return 'out_of_range';
    if (code === '23503' && /_account_id_fkey$/.test(String((error as { constraint?: unknown }).constraint)))
      return 'account_gone';
    if (code === '40001' || code === '40P01' || code === '55P03') return 'busy';
    if (code.startsWith('08') || CONNECTION_CODES.has(code)) return 'unavailable';
  }
  if (
    typeof message === 'string' &&
    /(Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect)/i.test(
      message,
    )
  ) {
    return 'unavailable';
  }
  return null;
}

/** A unique constraint refused the write (SQLSTATE 23505): the caller maps it to its own conflict code. */
export const isUniqueViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
