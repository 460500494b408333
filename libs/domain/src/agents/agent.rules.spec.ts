import { DomainError } from '../errors';
import {
  AGENT_JSON_MAX_BYTES,
  AGENT_LIST_MAX_ITEMS,
  agentRunDedupeKey,
  bindingWidening,
  checkBindingNarrows,
  effectiveAgentConfig,
  jsonContains,
  jsonNarrows,
  normaliseAgentDefaults,
  normaliseEventSubscriptions,
  normaliseGrants,
  normaliseMcpBindings,
  requireAgentJsonObject,
  scopeNarrows,
  subscriptionMatches,
  type AgentDefaults,
} from './agent.rules';

const failure = (fn: () => unknown): { code: string; status: number; details?: unknown } | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const e = error as DomainError;
    return { code: e.code, status: e.status, details: e.details };
  }
};
const code = (fn: () => unknown) => failure(fn)?.code;

const defaults = (over: Partial<AgentDefaults> = {}): AgentDefaults => ({
  ...normaliseAgentDefaults({}),
  ...over,
});

describe('normaliseAgentDefaults', () => {
  it('fills every omitted field with its empty default', () => {
    expect(normaliseAgentDefaults(undefined)).toEqual({
      llm_profile_id: null,
      tool_policy_id: null,
      mcp_bindings: [],
      event_subscriptions: [],
      grants: {},
      metadata: {},
    });
    expect(normaliseAgentDefaults(null)).toEqual(normaliseAgentDefaults({}));
    expect(normaliseAgentDefaults({ metadata: { a: 1 }, llm_profile_id: 'llmp_1' })).toMatchObject({
      llm_profile_id: 'llmp_1',
      metadata: { a: 1 },
      grants: {},
    });
  });

  it('normalises the lists: allowed_tools deduplicated, null config and filter kept as null', () => {
    const d = normaliseAgentDefaults({
      mcp_bindings: [{ mcp_server_id: 'mcp_1', allowed_tools: ['a', 'b', 'a'] }, { mcp_server_id: 'mcp_2' }],
      event_subscriptions: [{ type: 'floor.committed' }, { type: 'x', filter_json: { source: 'api' } }],
      grants: { allowed_output_targets: ['derived_output', 'derived_output'], reads: ['transcript'], x: 1 },
    });
    expect(d.mcp_bindings).toEqual([
      { mcp_server_id: 'mcp_1', allowed_tools: ['a', 'b'], config_override_json: null },
      { mcp_server_id: 'mcp_2', allowed_tools: null, config_override_json: null },
    ]);
    expect(d.event_subscriptions).toEqual([
      { type: 'floor.committed', filter_json: null },
      { type: 'x', filter_json: { source: 'api' } },
    ]);
    expect(d.grants).toEqual({ allowed_output_targets: ['derived_output'], reads: ['transcript'], x: 1 });
  });

  it.each([
    ['a non-object', 'text'],
    ['an array', []],
    ['an unknown field', { other: 1 }],
    ['an empty llm_profile_id', { llm_profile_id: '' }],
    ['a numeric tool_policy_id', { tool_policy_id: 5 }],
    ['metadata that is not an object', { metadata: [1] }],
    ['a NUL character anywhere', { metadata: { a: 'x\u0000' } }],
    ['a string over 64 KiB', { metadata: { a: 'x'.repeat(AGENT_JSON_MAX_BYTES) } }],
    ['an unpaired high surrogate', { metadata: { a: ['ok', 'x\ud83d'] } }],
    ['an unpaired low surrogate in a key', { grants: { ['\ude00']: 1 } }],
  ])('refuses %s with 400 validation_error', (_name, value) => {
    expect(failure(() => normaliseAgentDefaults(value))).toMatchObject({
      code: 'validation_error',
      status: 400,
    });
  });
});

describe('requireAgentJsonObject', () => {
  it('takes an object jsonb stores, paired surrogates (emoji) included', () => {
    const value = { note: 'smile \ud83d\ude00', nested: [{ k: 'v' }] };
    expect(requireAgentJsonObject('input_json', value)).toBe(value);
  });

  it.each([
    ['not an object', [1]],
    ['a lone high surrogate at the end', { a: 'x\ud83d' }],
    ['a lone low surrogate first', { a: '\ude00x' }],
    ['two high surrogates', { a: '\ud83d\ud83d\ude00' }],
    ['a lone surrogate in a nested key', { a: [{ ['\udfff']: 1 }] }],
  ])('refuses %s with 400 validation_error naming the field', (_name, value) => {
    expect(failure(() => requireAgentJsonObject('input_json', value))).toMatchObject({
      code: 'validation_error',
      status: 400,
      details: { fields: [{ field: 'input_json' }] },
    });
  });
});

describe('normaliseMcpBindings / normaliseEventSubscriptions', () => {
  it('refuses duplicates, missing ids, non-string tools and more than the item limit', () => {
    expect(code(() => normaliseMcpBindings('m', [{ mcp_server_id: 'a' }, { mcp_server_id: 'a' }]))).toBe(
      'validation_error',
    );
    expect(code(() => normaliseMcpBindings('m', [{}]))).toBe('validation_error');
    expect(code(() => normaliseMcpBindings('m', [{ mcp_server_id: 'a', allowed_tools: [1] }]))).toBe(
      'validation_error',
    );
    expect(code(() => normaliseMcpBindings('m', [{ mcp_server_id: 'a', config_override_json: [] }]))).toBe(
      'validation_error',
    );
    expect(code(() => normaliseMcpBindings('m', [{ mcp_server_id: 'a\u0000' }]))).toBe('validation_error');
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ type: `t${i}` }));
    expect(normaliseEventSubscriptions('s', many(AGENT_LIST_MAX_ITEMS))).toHaveLength(AGENT_LIST_MAX_ITEMS);
    expect(code(() => normaliseEventSubscriptions('s', many(AGENT_LIST_MAX_ITEMS + 1)))).toBe(
      'validation_error',
    );
  });

  it('refuses event subscriptions without a type, with a long type or a non-object filter', () => {
    expect(code(() => normaliseEventSubscriptions('s', [{ filter_json: {} }]))).toBe('validation_error');
    expect(code(() => normaliseEventSubscriptions('s', [{ type: 'x'.repeat(121) }]))).toBe(
      'validation_error',
    );
    expect(normaliseEventSubscriptions('s', [{ type: 'x'.repeat(120) }])[0]?.type).toHaveLength(120);
    expect(code(() => normaliseEventSubscriptions('s', [{ type: 'a', filter_json: 'b' }]))).toBe(
      'validation_error',
    );
    expect(code(() => normaliseEventSubscriptions('s', {}))).toBe('validation_error');
  });
});

describe('normaliseGrants', () => {
  it('answers 403 agent_allowed_output_target_forbidden for a forbidden target, naming it', () => {
    expect(
      failure(() => normaliseGrants('g', { allowed_output_targets: ['derived_output', 'session_messages'] })),
    ).toEqual({
      code: 'agent_allowed_output_target_forbidden',
      status: 403,
      details: { forbidden_targets: ['session_messages'] },
    });
    for (const target of ['floor', 'page_active', 'variable_live', 'memory_live', 'session_state_live_head'])
      expect(code(() => normaliseGrants('g', { allowed_output_targets: [target] }))).toBe(
        'agent_allowed_output_target_forbidden',
      );
  });

  it('answers 400 for an unknown target or read, keeps free-form keys', () => {
    expect(code(() => normaliseGrants('g', { allowed_output_targets: ['somewhere'] }))).toBe(
      'validation_error',
    );
    expect(code(() => normaliseGrants('g', { reads: ['secrets'] }))).toBe('validation_error');
    expect(code(() => normaliseGrants('g', { allowed_output_targets: 'derived_output' }))).toBe(
      'validation_error',
    );
    expect(normaliseGrants('g', { custom: { deep: [1] } })).toEqual({ custom: { deep: [1] } });
  });
});

describe('the narrowing rule', () => {
  const type = defaults({
    mcp_bindings: [
      { mcp_server_id: 'limited', allowed_tools: ['search', 'fetch'], config_override_json: null },
      { mcp_server_id: 'open', allowed_tools: null, config_override_json: null },
    ],
    event_subscriptions: [
      { type: 'floor.committed', filter_json: null },
      { type: 'derived_output.created', filter_json: { payload: { domain: 'summary' } } },
    ],
    grants: {
      allowed_output_targets: ['derived_output', 'project_inbox'],
      reads: ['transcript', 'project_events'],
      quota: { max: 3 },
    },
  });

  it('inherited (null or omitted) fields and equal values pass', () => {
    expect(bindingWidening(type, {})).toBeNull();
    expect(bindingWidening(type, { mcp_bindings: null, event_subscriptions: null, grants: null })).toBeNull();
    expect(
      bindingWidening(type, {
        mcp_bindings: type.mcp_bindings,
        event_subscriptions: type.event_subscriptions,
        grants: type.grants,
      }),
    ).toBeNull();
  });

  it('subsets pass', () => {
    expect(
      bindingWidening(type, {
        mcp_bindings: [
          { mcp_server_id: 'limited', allowed_tools: ['search'], config_override_json: { x: 1 } },
          { mcp_server_id: 'open', allowed_tools: ['anything'], config_override_json: null },
        ],
        event_subscriptions: [
          { type: 'floor.committed', filter_json: { source: 'api' } },
          {
            type: 'derived_output.created',
            filter_json: { payload: { domain: 'summary', status: 'draft' } },
          },
        ],
        grants: { allowed_output_targets: ['derived_output'], reads: ['transcript'], quota: { max: 3 } },
      }),
    ).toBeNull();
    expect(bindingWidening(type, { mcp_bindings: [], event_subscriptions: [], grants: {} })).toBeNull();
  });

  it('agent_override_expands_output_targets: a target the type does not allow', () => {
    expect(
      failure(() =>
        checkBindingNarrows(type, { grants: { allowed_output_targets: ['derived_output', 'client_data'] } }),
      ),
    ).toEqual({
      code: 'agent_override_expands_output_targets',
      status: 403,
      details: { targets: ['client_data'] },
    });
  });

  it('agent_override_expands_grants: a new key, a wider read list, a different value', () => {
    expect(code(() => checkBindingNarrows(type, { grants: { extra: true } }))).toBe(
      'agent_override_expands_grants',
    );
    expect(code(() => checkBindingNarrows(type, { grants: { reads: ['derived_outputs'] } }))).toBe(
      'agent_override_expands_grants',
    );
    expect(code(() => checkBindingNarrows(type, { grants: { quota: { max: 4 } } }))).toBe(
      'agent_override_expands_grants',
    );
  });

  it('agent_override_expands_subscriptions: another type, or a looser filter', () => {
    expect(
      failure(() =>
        checkBindingNarrows(type, { event_subscriptions: [{ type: 'session.archived', filter_json: null }] }),
      ),
    ).toEqual({
      code: 'agent_override_expands_subscriptions',
      status: 403,
      details: { event_types: ['session.archived'] },
    });
    expect(
      code(() =>
        checkBindingNarrows(type, {
          event_subscriptions: [{ type: 'derived_output.created', filter_json: null }],
        }),
      ),
    ).toBe('agent_override_expands_subscriptions');
    expect(
      code(() =>
        checkBindingNarrows(type, {
          event_subscriptions: [
            { type: 'derived_output.created', filter_json: { payload: { domain: 'other' } } },
          ],
        }),
      ),
    ).toBe('agent_override_expands_subscriptions');
  });

  it('agent_override_expands_mcp: an unknown server, unrestricted or extra tools on a limited one', () => {
    const mcp = (m: { mcp_server_id: string; allowed_tools: string[] | null }) => () =>
      checkBindingNarrows(type, { mcp_bindings: [{ ...m, config_override_json: null }] });
    expect(failure(mcp({ mcp_server_id: 'other', allowed_tools: null }))).toEqual({
      code: 'agent_override_expands_mcp',
      status: 403,
      details: { mcp_server_ids: ['other'] },
    });
    expect(code(mcp({ mcp_server_id: 'limited', allowed_tools: null }))).toBe('agent_override_expands_mcp');
    expect(code(mcp({ mcp_server_id: 'limited', allowed_tools: ['search', 'delete'] }))).toBe(
      'agent_override_expands_mcp',
    );
  });

  it('checks in the order output targets, grants, subscriptions, MCP', () => {
    const all = {
      grants: { allowed_output_targets: ['client_data'], extra: 1 },
      event_subscriptions: [{ type: 'nope', filter_json: null }],
      mcp_bindings: [{ mcp_server_id: 'nope', allowed_tools: null, config_override_json: null }],
    };
    expect(bindingWidening(type, all)?.code).toBe('agent_override_expands_output_targets');
    expect(bindingWidening(type, { ...all, grants: { extra: 1 } })?.code).toBe(
      'agent_override_expands_grants',
    );
    expect(bindingWidening(type, { ...all, grants: null })?.code).toBe(
      'agent_override_expands_subscriptions',
    );
    expect(bindingWidening(type, { ...all, grants: null, event_subscriptions: null })?.code).toBe(
      'agent_override_expands_mcp',
    );
  });

  it('jsonNarrows: subsets of arrays and objects, equal scalars', () => {
    expect(jsonNarrows(['a'], ['a', 'b'])).toBe(true);
    expect(jsonNarrows(['c'], ['a', 'b'])).toBe(false);
    expect(jsonNarrows({ a: 1 }, { a: 1, b: 2 })).toBe(true);
    expect(jsonNarrows({ c: 1 }, { a: 1 })).toBe(false);
    expect(jsonNarrows(1, 1)).toBe(true);
    expect(jsonNarrows(1, 2)).toBe(false);
    expect(jsonNarrows(['a'], 'a')).toBe(false);
  });
});

describe('scopeNarrows', () => {
  it('orders workspace > project > session > floor', () => {
    expect(scopeNarrows('workspace', 'workspace')).toBe(true);
    expect(scopeNarrows('floor', 'workspace')).toBe(true);
    expect(scopeNarrows('session', 'project')).toBe(true);
    expect(scopeNarrows('project', 'session')).toBe(false);
    expect(scopeNarrows('workspace', 'project')).toBe(false);
    expect(scopeNarrows('session', 'floor')).toBe(false);
  });
});

/**
 * jsonContains mirrors Postgres' `jsonb @>` on the documents the event trigger builds (objects at
 * the top). Each expectation was checked against Postgres 15 (`SELECT doc::jsonb @> filter::jsonb`).
 * Postgres' one exception, a top-level array containing a bare scalar (`'[1,2]' @> '1'`), cannot
 * occur: documents and filters are objects.
 */
describe('jsonContains (Postgres @> semantics)', () => {
  it.each([
    [{ a: 1, b: 2 }, {}, true],
    [{ a: 1 }, { a: 1 }, true],
    [{ a: 1.0 }, { a: 1 }, true],
    [{ a: '1' }, { a: 1 }, false],
    [{ a: null }, { a: null }, true],
    [{}, { a: null }, false],
    [{ a: { b: 1, c: 2 } }, { a: { b: 1 } }, true],
    [{ a: { b: 1 } }, { a: { b: 1, c: 2 } }, false],
    [{ a: [1, 2] }, { a: 1 }, false],
    [{ a: [1, 2] }, { a: [2] }, true],
    [{ a: [1, 1, 2] }, { a: [1, 1, 1] }, true],
    [{ a: [1] }, { a: [] }, true],
    [{ a: [] }, { a: [] }, true],
    [{ a: [1, [2, 3]] }, { a: [[2]] }, true],
    [{ a: [1, [2, 3]] }, { a: [2] }, false],
    [{ a: [{ x: 1, y: 2 }] }, { a: [{ x: 1 }] }, true],
    [{ a: {} }, { a: [] }, false],
    [{ a: [] }, { a: {} }, false],
    [{ a: true }, { a: 'true' }, false],
  ])('%j @> %j is %s', (doc, filter, expected) => {
    expect(jsonContains(doc, filter)).toBe(expected);
  });
});

describe('subscriptionMatches', () => {
  const event = {
    type: 'derived_output.created',
    source: 'api',
    session_id: 'ses_1',
    payload: { domain: 'summary', status: 'draft', changed_fields: ['value', 'status'] },
  };
  it('needs the same type and, when set, a contained filter', () => {
    expect(subscriptionMatches({ type: 'derived_output.created', filter_json: null }, event)).toBe(true);
    expect(subscriptionMatches({ type: 'floor.committed', filter_json: null }, event)).toBe(false);
    expect(
      subscriptionMatches(
        { type: 'derived_output.created', filter_json: { payload: { domain: 'summary' }, source: 'api' } },
        event,
      ),
    ).toBe(true);
    expect(
      subscriptionMatches(
        { type: 'derived_output.created', filter_json: { payload: { changed_fields: ['status'] } } },
        event,
      ),
    ).toBe(true);
    expect(
      subscriptionMatches(
        { type: 'derived_output.created', filter_json: { payload: { domain: 'mood' } } },
        event,
      ),
    ).toBe(false);
  });
});

describe('effectiveAgentConfig', () => {
  const type = defaults({
    llm_profile_id: 'llmp_type',
    tool_policy_id: 'tpol_type',
    event_subscriptions: [{ type: 'floor.committed', filter_json: null }],
    grants: { allowed_output_targets: ['derived_output', 'project_inbox'], reads: ['transcript'] },
    metadata: { a: 1, b: 1 },
  });
  const binding = {
    scope_kind: 'project' as const,
    llm_profile_id: null,
    tool_policy_id: null,
    mcp_bindings: null,
    event_subscriptions: null,
    grants: null,
    metadata: {},
  };

  it('inherits every null field from the type', () => {
    expect(effectiveAgentConfig(type, binding)).toEqual({
      scope_kind: 'project',
      llm_profile_id: 'llmp_type',
      tool_policy_id: 'tpol_type',
      mcp_bindings: [],
      event_subscriptions: [{ type: 'floor.committed', filter_json: null }],
      grants: type.grants,
      allowed_output_targets: ['derived_output', 'project_inbox'],
      reads: ['transcript'],
      metadata: { a: 1, b: 1 },
    });
  });

  it('uses the set overrides, and the binding metadata keys over the type’s', () => {
    const config = effectiveAgentConfig(type, {
      ...binding,
      llm_profile_id: 'llmp_own',
      event_subscriptions: [],
      grants: { allowed_output_targets: ['derived_output'] },
      metadata: { b: 2, c: 3 },
    });
    expect(config).toMatchObject({
      llm_profile_id: 'llmp_own',
      tool_policy_id: 'tpol_type',
      event_subscriptions: [],
      allowed_output_targets: ['derived_output'],
      reads: [],
      metadata: { a: 1, b: 2, c: 3 },
    });
  });
});

describe('agentRunDedupeKey', () => {
  it('is per (binding, event) for event runs and per (binding, key) for manual ones', () => {
    expect(agentRunDedupeKey('agb_1', { eventId: 'evt_1' })).toBe('agent.run:agb_1:event:evt_1');
    expect(agentRunDedupeKey('agb_1', { idempotencyKey: 'k' })).toBe('agent.run:agb_1:manual:k');
  });
});
