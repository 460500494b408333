import { DomainError } from '../errors';
import {
  changedSettingsFields,
  llmOverrideParams,
  requireLlmOverrideJson,
  requireMcpUrl,
  requireSettingsObject,
  requireToolList,
  requireToolPolicyJson,
  requireToolPolicyOverrideJson,
  resolveAllowedTools,
  SETTINGS_JSON_MAX_BYTES,
} from './settings.rules';

const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_error');
    return ((error as DomainError).details as { fields: Array<{ field: string }> }).fields.map(
      (f) => f.field,
    );
  }
  throw new Error('expected a validation error');
};

describe('settings rules', () => {
  it('removes duplicate allowed tools in order and names the unknown ones', () => {
    expect(resolveAllowedTools(['b', 'a', 'b'], ['a', 'b'])).toEqual(['b', 'a']);
    try {
      resolveAllowedTools(['a', 'x', 'y', 'x'], ['a']);
      throw new Error('expected a failure');
    } catch (error) {
      expect((error as DomainError).details).toMatchObject({ unknown_tools: ['x', 'y'] });
    }
  });

  it('checks tool lists: unique, 1-200 names, at most 200', () => {
    expect(
      requireToolList(
        'tools',
        Array.from({ length: 200 }, (_, i) => `t${i}`),
      ),
    ).toHaveLength(200);
    expect(
      fieldsOf(() =>
        requireToolList(
          'tools',
          Array.from({ length: 201 }, (_, i) => `t${i}`),
        ),
      ),
    ).toEqual(['tools']);
    expect(fieldsOf(() => requireToolList('tools', ['a', 'a']))).toEqual(['tools']);
    expect(fieldsOf(() => requireToolList('tools', ['x'.repeat(201)]))).toEqual(['tools']);
    expect(requireToolList('tools', ['x'.repeat(200)])).toHaveLength(1);
  });

  it('accepts http and https MCP URLs only', () => {
    expect(requireMcpUrl('https://a.example/sse')).toBe('https://a.example/sse');
    expect(requireMcpUrl('http://a.example')).toBe('http://a.example');
    expect(fieldsOf(() => requireMcpUrl('ws://a.example'))).toEqual(['url']);
    expect(fieldsOf(() => requireMcpUrl('/relative'))).toEqual(['url']);
  });

  it('validates LLM override_json keys and binding params', () => {
    expect(requireLlmOverrideJson({})).toEqual({});
    expect(
      requireLlmOverrideJson({
        provider: 'xai',
        model_id: 'm',
        params: { temperature: 0, top_p: 1, stream: null },
      }),
    ).toBeTruthy();
    expect(fieldsOf(() => requireLlmOverrideJson({ api_key: 'x' }))).toEqual(['override_json.api_key']);
    expect(
      fieldsOf(() =>
        requireLlmOverrideJson({ params: { temperature: -0.1, top_k: -1, reasoning_effort: 'max' } }),
      ),
    ).toEqual([
      'override_json.params.temperature',
      'override_json.params.top_k',
      'override_json.params.reasoning_effort',
    ]);
    expect(fieldsOf(() => requireLlmOverrideJson({ params: [] }))).toEqual(['override_json.params']);
    expect(fieldsOf(() => requireLlmOverrideJson({ base_url: 'https://x' }))).toEqual([
      'override_json.base_url',
    ]);
    expect(fieldsOf(() => requireLlmOverrideJson({ params: { constructor: 1 } }))).toEqual([
      'override_json.params.constructor',
    ]);
  });

  it('keeps other LLM override keys as written and reads top-level binding params', () => {
    const written = { temperature: 0.5, max_tokens: 10, extra: { a: 1 }, constructor: 'x' };
    expect(requireLlmOverrideJson(written)).toEqual(written);
    expect(fieldsOf(() => requireLlmOverrideJson({ temperature: 3, top_k: -1 }))).toEqual([
      'override_json.temperature',
      'override_json.top_k',
    ]);
    expect(llmOverrideParams({})).toBeNull();
    expect(llmOverrideParams({ extra: 1 })).toBeNull();
    expect(llmOverrideParams({ params: { top_k: 2 } })).toEqual({ top_k: 2 });
    expect(llmOverrideParams({ temperature: 0.5, top_p: null, params: { temperature: 1 } })).toEqual({
      temperature: 1,
      top_p: null,
    });
  });

  it('validates tool policy JSON and its overrides', () => {
    expect(requireToolPolicyJson({ mode: 'allow', tools: ['a'] })).toEqual({ mode: 'allow', tools: ['a'] });
    expect(fieldsOf(() => requireToolPolicyJson({}))).toEqual(['policy_json.mode', 'policy_json.tools']);
    expect(requireToolPolicyOverrideJson({})).toEqual({});
    expect(requireToolPolicyOverrideJson({ tools: [] })).toEqual({ tools: [] });
    expect(fieldsOf(() => requireToolPolicyOverrideJson({ mode: 'x', other: 1 }))).toEqual([
      'override_json.other',
      'override_json.mode',
    ]);
  });

  it('limits settings objects to 64 KiB serialised', () => {
    const at = { k: 'x'.repeat(SETTINGS_JSON_MAX_BYTES - '{"k":""}'.length) };
    expect(requireSettingsObject('config_override_json', at)).toBe(at);
    const over = { k: 'x'.repeat(SETTINGS_JSON_MAX_BYTES - '{"k":""}'.length + 1) };
    expect(fieldsOf(() => requireSettingsObject('config_override_json', over))).toEqual([
      'config_override_json',
    ]);
    expect(fieldsOf(() => requireSettingsObject('x', [1]))).toEqual(['x']);
  });

  it('names changed fields regardless of key order', () => {
    expect(changedSettingsFields(undefined, { a: 1 }, ['a'])).toEqual(['a']);
    expect(
      changedSettingsFields({ a: { x: 1, y: 2 }, b: 1 }, { a: { y: 2, x: 1 }, b: 2 }, ['a', 'b']),
    ).toEqual(['b']);
  });
});
