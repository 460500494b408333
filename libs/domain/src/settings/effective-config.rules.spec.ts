import {
  effectiveMcpBinding,
  effectiveToolPolicy,
  envModelLayer,
  llmOverrideWarning,
  mergeParams,
  permittedTools,
  projectOverrideLayer,
  resolveModelSlot,
  resolveModelSlots,
  sourcedLeaves,
  type ModelLayer,
} from './effective-config.rules';

const env = envModelLayer({ provider: 'openai', model: 'gpt-env', baseUrl: null });
const profile = {
  id: 'llmp_1',
  preset_name: 'Writer',
  provider: 'anthropic',
  model_id: 'claude',
  base_url: null,
};

describe('model slot resolution', () => {
  it('falls back to env for every slot', () => {
    const slots = resolveModelSlots([env]);
    expect(slots.map((s) => [s.slot, s.source, s.model_id])).toEqual([
      ['*', 'env', 'gpt-env'],
      ['narrator', 'env', 'gpt-env'],
      ['director', 'env', 'gpt-env'],
      ['verifier', 'env', 'gpt-env'],
      ['memory', 'env', 'gpt-env'],
    ]);
    expect(slots[0]).toMatchObject({ scope: null, profile_id: null, preset_name: null, params: null });
  });

  it('lets the Project override beat env, keeping profile fields with their source', () => {
    const layer = projectOverrideLayer(
      { id: 'o1', override_json: { model_id: 'tuned', params: { temperature: 1 } } },
      profile,
    );
    const slot = resolveModelSlot('narrator', [env, layer]);
    expect(slot).toMatchObject({
      slot: 'narrator',
      source: 'project_override',
      provider: 'anthropic',
      model_id: 'tuned',
      params: { temperature: 1 },
      field_sources: { provider: 'profile', model_id: 'project_override' },
    });
  });

  it('orders session_profile > project_override > global_profile > env, and a slot binding over *', () => {
    const layer = (source: ModelLayer['source'], slot: ModelLayer['slot'], model: string): ModelLayer => ({
      ...env,
      source,
      slot,
      model_id: model,
    });
    const layers = [
      env,
      layer('global_profile', '*', 'g'),
      layer('project_override', '*', 'p'),
      layer('session_profile', 'memory', 's'),
    ];
    expect(resolveModelSlot('memory', layers).model_id).toBe('s');
    expect(resolveModelSlot('narrator', layers).model_id).toBe('p');
    expect(
      resolveModelSlot('narrator', [
        env,
        layer('global_profile', '*', 'g'),
        layer('global_profile', 'narrator', 'gn'),
      ]).model_id,
    ).toBe('gn');
  });

  it('needs the env layer', () => {
    expect(() => resolveModelSlot('*', [])).toThrow();
  });

  it('merges params with null cancelling the lower value', () => {
    expect(mergeParams({ temperature: 1, top_p: 0.5 }, { top_p: null, top_k: 3 })).toEqual({
      temperature: 1,
      top_k: 3,
    });
    expect(mergeParams(null, undefined)).toEqual({});
  });

  it('warns when the override profile is missing, deleted or disabled', () => {
    const o = { id: 'o', base_profile_id: 'p' };
    expect(llmOverrideWarning(o, null)?.code).toBe('profile_not_found');
    expect(llmOverrideWarning(o, { status: 'deleted' })?.code).toBe('profile_not_found');
    expect(llmOverrideWarning(o, { status: 'disabled' })?.code).toBe('profile_disabled');
    expect(llmOverrideWarning(o, { status: 'active' })).toBeNull();
  });
});

describe('tool policies and MCP bindings', () => {
  const policy = { name: 'P', policy_json: { mode: 'deny' as const, tools: ['shell'] } };

  it('applies override keys over the base policy, each with its source', () => {
    const plain = effectiveToolPolicy({ id: 'o', base_policy_id: 'b', override_json: {} }, policy);
    expect(plain.mode).toEqual({ value: 'deny', source: 'tool_policy' });
    const over = effectiveToolPolicy(
      { id: 'o', base_policy_id: 'b', override_json: { mode: 'allow', tools: ['a'] } },
      policy,
    );
    expect([over.mode, over.tools]).toEqual([
      { value: 'allow', source: 'project_override' },
      { value: ['a'], source: 'project_override' },
    ]);
  });

  it('permits a tool only when every policy lets it through', () => {
    const deny = effectiveToolPolicy({ id: 'o1', base_policy_id: 'b1', override_json: {} }, policy);
    const allow = effectiveToolPolicy(
      { id: 'o2', base_policy_id: 'b2', override_json: { mode: 'allow', tools: ['a', 'shell'] } },
      policy,
    );
    expect(permittedTools(['a', 'b', 'shell'], [deny])).toEqual(['a', 'b']);
    expect(permittedTools(['a', 'b', 'shell'], [deny, allow])).toEqual(['a']);
    expect(permittedTools(['a'], [])).toEqual(['a']);
  });

  it('treats empty allowed_tools as the whole catalog and drops tools gone from it', () => {
    const server = { name: 'S', url: 'https://s', tools: ['a', 'b'] };
    const open = effectiveMcpBinding(
      { id: 'b', mcp_server_id: 's', allowed_tools: [], config_override_json: {} },
      server,
      [],
    );
    expect(open.effective_tools).toEqual({ value: ['a', 'b'], source: 'mcp_server' });
    const narrowed = effectiveMcpBinding(
      { id: 'b', mcp_server_id: 's', allowed_tools: ['b', 'gone'], config_override_json: {} },
      server,
      [],
    );
    expect(narrowed.effective_tools).toEqual({ value: ['b'], source: 'project_override' });
    expect(narrowed.permitted_tools).toEqual({ value: ['b'], source: 'project_override' });
  });
});

describe('prompt policy defaults', () => {
  it('wraps every leaf with its source, arrays as leaves', () => {
    expect(sourcedLeaves({ a: { b: 1, c: [1] } }, 'system_default')).toEqual({
      a: { b: { value: 1, source: 'system_default' }, c: { value: [1], source: 'system_default' } },
    });
  });
});
