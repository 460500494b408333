import type { VariableRow } from '@hearth/persistence';
import {
  flattenLayers,
  normaliseTarget,
  parseBranchScopeId,
  requireUniqueTargets,
  resolveLayers,
  serialiseVariableValue,
  VARIABLE_VALUE_MAX_BYTES,
  type VariableLayer,
} from './variable-rules';

const row = (key: string, value: unknown, updated_at = 1): VariableRow =>
  ({ id: `var_${key}`, key, value, updated_at }) as VariableRow;

const code = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe('variable rules', () => {
  it('normalises targets per scope', () => {
    expect(normaliseTarget({ scope: 'global', scope_id: 'x' })).toEqual({
      scope: 'global',
      scopeId: 'global',
    });
    expect(normaliseTarget({ scope: 'chat', scope_id: 'ses_1' })).toEqual({
      scope: 'chat',
      scopeId: 'ses_1',
    });
    expect(normaliseTarget({ scope: 'branch', session_id: 's', branch_id: 'b' })).toEqual({
      scope: 'branch',
      scopeId: 's:b',
      sessionId: 's',
      branchId: 'b',
    });
    expect(normaliseTarget({ scope: 'branch', scope_id: 's:b:c' })).toMatchObject({
      sessionId: 's',
      branchId: 'b:c',
    });
    expect(
      normaliseTarget({ scope: 'branch', scope_id: 's:b', session_id: 's', branch_id: 'b' }).scopeId,
    ).toBe('s:b');
  });

  it.each([
    [{ scope: 'chat' as const }],
    [{ scope: 'page' as const, scope_id: 'p', session_id: 's' }],
    [{ scope: 'branch' as const }],
    [{ scope: 'branch' as const, branch_id: 'b' }],
    [{ scope: 'branch' as const, scope_id: 'nocolon' }],
    [{ scope: 'branch' as const, scope_id: ':b' }],
    [{ scope: 'branch' as const, scope_id: 's:x', session_id: 's', branch_id: 'b' }],
  ])('refuses the context %j with variable_context_invalid', (input) => {
    expect(code(() => normaliseTarget(input))).toBe('variable_context_invalid');
  });

  it('parses branch scope ids at the first colon', () => {
    expect(parseBranchScopeId('a:b')).toEqual({ sessionId: 'a', branchId: 'b' });
    expect(parseBranchScopeId('a:')).toBeNull();
    expect(parseBranchScopeId('ab')).toBeNull();
  });

  it('finds duplicate normalised targets', () => {
    const t = (scopeId: string) => ({ target: { scope: 'global' as const, scopeId }, key: 'k' });
    expect(code(() => requireUniqueTargets([t('global'), { ...t('global'), key: 'j' }]))).toBeNull();
    expect(code(() => requireUniqueTargets([t('global'), t('global')]))).toBe(
      'variable_batch_duplicate_target',
    );
  });

  it('serialises plain JSON within the size limit', () => {
    expect(serialiseVariableValue(null)).toEqual({ json: 'null', bytes: 4 });
    expect(serialiseVariableValue({ a: 'é' }).bytes).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(code(() => serialiseVariableValue(undefined))).toBe('variable_value_invalid');
    expect(code(() => serialiseVariableValue(Number.NaN))).toBe('variable_value_invalid');
    expect(code(() => serialiseVariableValue(new Date()))).toBe('variable_value_invalid');
    expect(code(() => serialiseVariableValue('x'.repeat(VARIABLE_VALUE_MAX_BYTES - 2)))).toBeNull();
    expect(code(() => serialiseVariableValue('x'.repeat(VARIABLE_VALUE_MAX_BYTES - 1)))).toBe(
      'variable_value_invalid',
    );
  });

  it('resolves keys from the highest layer, sorted by key', () => {
    const layers: VariableLayer[] = [
      { scope: 'page', scopeId: 'pg', items: [row('x', 'page')] },
      { scope: 'branch', scopeId: 's:b', items: [row('x', 'branch'), row('b', 1)] },
      { scope: 'global', scopeId: 'global', items: [row('a', 'g'), row('x', 'g')] },
    ];
    expect(resolveLayers(layers)).toEqual([
      {
        key: 'a',
        value: 'g',
        source_scope: 'global',
        source_scope_id: 'global',
        source_scope_ref: null,
        updated_at: 1,
      },
      {
        key: 'b',
        value: 1,
        source_scope: 'branch',
        source_scope_id: 's:b',
        source_scope_ref: { session_id: 's', branch_id: 'b' },
        updated_at: 1,
      },
      {
        key: 'x',
        value: 'page',
        source_scope: 'page',
        source_scope_id: 'pg',
        source_scope_ref: null,
        updated_at: 1,
      },
    ]);
    expect(flattenLayers(layers)).toEqual({ a: 'g', b: 1, x: 'page' });
  });
});
