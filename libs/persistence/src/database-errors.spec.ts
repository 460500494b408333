import { classifyDatabaseError } from './database-errors';

describe('classifyDatabaseError', () => {
  it.each([
    [{ code: '22021' }, 'invalid_text'],
    [{ code: '22P05' }, 'invalid_text'],
    [{ code: '22P02', detail: 'Unicode low surrogate must follow a high surrogate.' }, 'invalid_text'],
    [{ code: '22P02', message: 'invalid input syntax for type integer: "x"' }, null],
    [{ code: '22003' }, 'out_of_range'],
    [{ code: '40001' }, 'busy'],
    [{ code: '40P01' }, 'busy'],
    [{ code: '08006' }, 'unavailable'],
    [{ code: '57P01' }, 'unavailable'],
    [{ code: 'ECONNREFUSED' }, 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 'unavailable'],
    [{ code: '23505' }, null],
    [{ code: '23503', constraint: 'user_cards_account_id_fkey' }, 'account_gone'],
    [{ code: '23503', constraint: 'llm_profile_bindings_session_id_fkey' }, null],
    [{ code: '23503' }, null],
    [new Error('boom'), null],
    [null, null],
  ])('%p → %p', (error, kind) => {
    expect(classifyDatabaseError(error)).toBe(kind);
  });
});
