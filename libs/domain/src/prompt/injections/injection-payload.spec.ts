import { DomainError } from '../../errors';
import { ADVANCED_PLACEMENTS, COMMON_PLACEMENTS } from './injections';
import {
  INJECTION_ORDER_MAX,
  INJECTION_ORDER_MIN,
  INJECTION_TTL_MAX_MS,
  injectionExpiresAt,
  injectionPayloadProblems,
  requireInjectionCreate,
  requireInjectionPatch,
} from './injection-payload';

const base = { source_kind: 'client_injection', title: 'T', content: 'C', placement: 'after_history' };

const problemFields = (body: Record<string, unknown>, mode: 'create' | 'patch' = 'create') =>
  injectionPayloadProblems(body, mode).map((p) => p.field);

describe('persistent injection payloads', () => {
  it('applies the defaults of spec 2 on create', () => {
    expect(requireInjectionCreate(base)).toEqual({
      title: 'T',
      content: 'C',
      placement: 'after_history',
      placement_params: null,
      order: 100,
      enabled: true,
      mode_scope: null,
      ttl_ms: null,
    });
  });

  it('accepts every common and advanced placement', () => {
    for (const placement of [...COMMON_PLACEMENTS, ...Object.keys(ADVANCED_PLACEMENTS)])
      expect(problemFields({ ...base, placement })).toEqual([]);
    expect(problemFields({ ...base, placement: 'before_everything' })).toEqual(['placement']);
  });

  it('requires source_kind client_injection, title, content and placement', () => {
    expect(problemFields({})).toEqual(['source_kind', 'title', 'content', 'placement']);
    expect(problemFields({ ...base, source_kind: 'agent_injection' })).toEqual(['source_kind']);
    expect(problemFields({ ...base, title: null })).toEqual(['title']);
  });

  it('limits title to 1-256 and content to 1-8000 characters, non-blank, without NUL', () => {
    expect(problemFields({ ...base, title: 'x'.repeat(256), content: 'y'.repeat(8000) })).toEqual([]);
    expect(problemFields({ ...base, title: 'x'.repeat(257) })).toEqual(['title']);
    expect(problemFields({ ...base, content: 'y'.repeat(8001) })).toEqual(['content']);
    expect(problemFields({ ...base, title: '' })).toEqual(['title']);
    expect(problemFields({ ...base, content: '   ' })).toEqual(['content']);
    expect(problemFields({ ...base, content: 'a\u0000b' })).toEqual(['content']);
    expect(problemFields({ ...base, title: 5 })).toEqual(['title']);
  });

  it('checks placement_params keys and values', () => {
    expect(problemFields({ ...base, placement_params: { floor_no: 0, offset: 3, depth: 9 } })).toEqual([]);
    expect(problemFields({ ...base, placement_params: {} })).toEqual([]);
    expect(problemFields({ ...base, placement_params: null })).toEqual([]);
    expect(problemFields({ ...base, placement_params: { floor_no: -1 } })).toEqual(['placement_params']);
    expect(problemFields({ ...base, placement_params: { depth: 1.5 } })).toEqual(['placement_params']);
    expect(problemFields({ ...base, placement_params: { offset: '2' } })).toEqual(['placement_params']);
    expect(problemFields({ ...base, placement_params: { row: 1 } })).toEqual(['placement_params']);
    expect(problemFields({ ...base, placement_params: [1] })).toEqual(['placement_params']);
  });

  it('checks order, enabled, mode_scope and ttl_ms at and past their limits', () => {
    expect(problemFields({ ...base, order: INJECTION_ORDER_MAX })).toEqual([]);
    expect(problemFields({ ...base, order: INJECTION_ORDER_MIN })).toEqual([]);
    expect(problemFields({ ...base, order: INJECTION_ORDER_MAX + 1 })).toEqual(['order']);
    expect(problemFields({ ...base, order: INJECTION_ORDER_MIN - 1 })).toEqual(['order']);
    expect(problemFields({ ...base, order: 1.5 })).toEqual(['order']);
    expect(problemFields({ ...base, order: null })).toEqual(['order']);
    expect(problemFields({ ...base, enabled: 'yes' })).toEqual(['enabled']);
    expect(problemFields({ ...base, mode_scope: 'native' })).toEqual([]);
    expect(problemFields({ ...base, mode_scope: 'compat' })).toEqual(['mode_scope']);
    expect(problemFields({ ...base, ttl_ms: 1 })).toEqual([]);
    expect(problemFields({ ...base, ttl_ms: INJECTION_TTL_MAX_MS })).toEqual([]);
    expect(problemFields({ ...base, ttl_ms: INJECTION_TTL_MAX_MS + 1 })).toEqual(['ttl_ms']);
    expect(problemFields({ ...base, ttl_ms: 0 })).toEqual(['ttl_ms']);
  });

  it('throws 400 invalid_injection_payload naming the fields', () => {
    let error: unknown;
    try {
      requireInjectionCreate({ ...base, title: '', order: 'x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'invalid_injection_payload', status: 400 });
    expect((error as DomainError).details).toEqual({
      fields: [
        { field: 'title', problems: [expect.any(String)] },
        { field: 'order', problems: [expect.any(String)] },
      ],
    });
  });

  it('PATCH needs a mutable field; nullable fields clear, others refuse null', () => {
    expect(problemFields({}, 'patch')).toHaveLength(1);
    expect(problemFields({ source_kind: 'client_injection' }, 'patch')).toHaveLength(1);
    expect(requireInjectionPatch({ placement_params: null, mode_scope: null, ttl_ms: null })).toEqual({
      placement_params: null,
      mode_scope: null,
      ttl_ms: null,
    });
    expect(requireInjectionPatch({ source_kind: 'client_injection', enabled: false })).toEqual({
      enabled: false,
    });
    expect(problemFields({ title: null }, 'patch')).toEqual(['title']);
    expect(problemFields({ source_kind: 'debug_injection', title: 'x' }, 'patch')).toEqual(['source_kind']);
  });

  it('expires at created_at + ttl_ms', () => {
    expect(injectionExpiresAt(1000, 500)).toBe(1500);
    expect(injectionExpiresAt(1000, null)).toBeNull();
  });
});
