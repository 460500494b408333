import { DomainError } from '../../errors';
import { mergePolicyPatch } from './policy';
import {
  policyPatchProblems,
  prunePolicyValue,
  requirePolicyPatch,
  resolveStoredPolicy,
  RESOLVED_POLICY_DEBUG,
} from './policy-patch';

const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_error');
    expect((error as DomainError).status).toBe(400);
    return ((error as DomainError).details as { fields: Array<{ field: string }> }).fields.map(
      (f) => f.field,
    );
  }
  throw new Error('expected a validation error');
};

describe('policy PATCH bodies', () => {
  it('accepts every valid leaf, null sections and null leaves', () => {
    const body = {
      structure: {
        mode: 'strict_alternating',
        merge_adjacent_same_role: true,
        preserve_system_messages: false,
        assistant_rewrite_strategy: 'to_user_transcript',
      },
      delivery: { allow_assistant_prefill: false, require_last_user: true, no_assistant: null },
      budget: { max_input_tokens: 1, reserved_completion_tokens: 0 },
      source_selection: {
        history: { mode: 'windowed', max_messages: 5 },
        memory: null,
        worldbook: { enabled: false },
      },
      visibility: {
        mode: 'deny_all_except_visible',
        hidden_floor_ranges: [{ start_floor_no: 0, end_floor_no: 0 }],
      },
    };
    expect(policyPatchProblems(body)).toEqual([]);
    expect(requirePolicyPatch(body)).toEqual(body);
    expect(requirePolicyPatch({ structure: null })).toEqual({ structure: null });
  });

  it('requires at least one section', () => {
    expect(fieldsOf(() => requirePolicyPatch({}))).toEqual([
      'structure',
      'delivery',
      'budget',
      'source_selection',
      'visibility',
    ]);
  });

  it('names the path of every unknown key and bad value', () => {
    expect(
      fieldsOf(() =>
        requirePolicyPatch({
          structure: { mode: 'loud', colour: 'red' },
          budget: { max_input_tokens: 0, reserved_completion_tokens: -1 },
          source_selection: { history: { max_messages: 1.5 } },
          visibility: { hidden_floor_ranges: [{ start_floor_no: 3, end_floor_no: 2 }] },
          delivery: 'yes',
        }),
      ).sort(),
    ).toEqual(
      [
        'budget.max_input_tokens',
        'budget.reserved_completion_tokens',
        'delivery',
        'source_selection.history.max_messages',
        'structure.colour',
        'structure.mode',
        'visibility.hidden_floor_ranges',
      ].sort(),
    );
  });

  it('refuses a debug key inside a section (the debug section is read-only)', () => {
    expect(fieldsOf(() => requirePolicyPatch({ structure: { debug: { x: 1 } } }))).toEqual([
      'structure.debug',
    ]);
    expect(policyPatchProblems({ debug: {} })).toEqual([
      { field: 'debug', problems: ['debug is not a policy section'] },
    ]);
  });

  it('prunes the empty objects a clearing merge leaves', () => {
    const merged = mergePolicyPatch(
      { structure: { mode: 'flattened' }, budget: { max_input_tokens: 9 } },
      {
        structure: { mode: null },
      },
    );
    expect(merged).toEqual({ structure: {}, budget: { max_input_tokens: 9 } });
    expect(prunePolicyValue(merged)).toEqual({ budget: { max_input_tokens: 9 } });
    expect(prunePolicyValue({ visibility: { hidden_floor_ranges: [] } })).toEqual({
      visibility: { hidden_floor_ranges: [] },
    });
  });

  it('resolves stored layers with the read-only debug section all false', () => {
    const r = resolveStoredPolicy([
      { source: 'session_policy', value: { structure: { mode: 'flattened' } } },
      { source: 'branch_policy', value: { budget: { max_input_tokens: 500 } } },
    ]);
    expect(r.view.debug).toEqual(RESOLVED_POLICY_DEBUG);
    expect(r.view.structure.mode).toBe('flattened');
    expect(r.view.budget.max_input_tokens).toBe(500);
    expect(r.sources['budget.max_input_tokens']).toBe('branch_policy');
    expect(r.warnings).toEqual([]);
  });
});
