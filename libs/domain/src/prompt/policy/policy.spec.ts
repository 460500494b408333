import { applyStructure, type StructuredMessage } from './structure';
import { selectHistory } from './history-selection';
import { DEFAULT_PROMPT_POLICY, mergePolicyPatch, resolvePolicy, type PromptPolicy } from './policy';

const withPolicy = (patch: Record<string, unknown>): PromptPolicy =>
  resolvePolicy([{ source: 'request_override', value: patch }]).policy;

describe('policy resolution over layers (spec 2)', () => {
  it('starts from the system default with every leaf sourced system_default', () => {
    const r = resolvePolicy([]);
    expect(r.policy).toEqual(DEFAULT_PROMPT_POLICY);
    expect(new Set(Object.values(r.sources))).toEqual(new Set(['system_default']));
  });

  it('applies layers low to high whatever order they are given in', () => {
    const r = resolvePolicy([
      { source: 'provider_constraint', value: { delivery: { allow_assistant_prefill: false } } },
      {
        source: 'session_policy',
        value: { structure: { mode: 'strict_alternating' }, delivery: { allow_assistant_prefill: true } },
      },
      { source: 'branch_policy', value: { structure: { mode: 'flattened' } } },
      { source: 'asset_default', value: { budget: { max_input_tokens: 8000 } } },
    ]);
    expect(r.policy.structure.mode).toBe('flattened');
    expect(r.sources['structure.mode']).toBe('branch_policy');
    expect(r.policy.delivery.allow_assistant_prefill).toBe(false);
    expect(r.sources['delivery.allow_assistant_prefill']).toBe('provider_constraint');
    expect(r.policy.budget.max_input_tokens).toBe(8000);
    expect(r.sources['budget.max_input_tokens']).toBe('asset_default');
  });

  it('null clears a section or a leaf back to the system default', () => {
    const r = resolvePolicy([
      {
        source: 'session_policy',
        value: { structure: { mode: 'no_assistant' }, budget: { max_input_tokens: 100 } },
      },
      { source: 'branch_policy', value: { structure: null, budget: { max_input_tokens: null } } },
    ]);
    expect(r.policy.structure.mode).toBe('default');
    expect(r.policy.budget.max_input_tokens).toBe(DEFAULT_PROMPT_POLICY.budget.max_input_tokens);
    expect(r.sources['budget.max_input_tokens']).toBe('system_default');
  });

  it('ignores invalid values and unknown keys with warnings naming layer and path', () => {
    const r = resolvePolicy([
      {
        source: 'session_policy',
        value: {
          structure: { mode: 'sideways' },
          budget: { max_input_tokens: -5 },
          colour: 'red',
          visibility: 3,
        },
      },
    ]);
    expect(r.policy).toEqual(DEFAULT_PROMPT_POLICY);
    expect(r.warnings.map((w) => [w.code, w.path]).sort()).toEqual(
      [
        ['policy_value_invalid', 'structure.mode'],
        ['policy_value_invalid', 'budget.max_input_tokens'],
        ['policy_key_unknown', 'colour'],
        ['policy_value_invalid', 'visibility'],
      ].sort(),
    );
    expect(resolvePolicy([{ source: 'branch_policy', value: 'nope' }]).warnings[0].code).toBe(
      'policy_layer_invalid',
    );
  });

  it('merges a PATCH into the stored policy: objects deep-merge, null clears, absent stays', () => {
    const stored = {
      structure: { mode: 'flattened', merge_adjacent_same_role: true },
      budget: { max_input_tokens: 10 },
    };
    expect(mergePolicyPatch(stored, { structure: { mode: 'default' }, budget: null })).toEqual({
      structure: { mode: 'default', merge_adjacent_same_role: true },
    });
  });
});

describe('structure modes', () => {
  const convo: StructuredMessage[] = [
    { role: 'system', content: 'Sys' },
    { role: 'assistant', content: 'Hello' },
    { role: 'system', content: 'Note' },
    { role: 'user', content: 'Hi' },
    { role: 'user', content: 'Again' },
  ];
  const run = (patch: Record<string, unknown>, messages = convo, endsWithPrefill = false) =>
    applyStructure({
      messages,
      policy: withPolicy(patch),
      user_name: 'Ann',
      char_name: 'Bot',
      ends_with_prefill: endsWithPrefill,
    });

  it('default leaves the messages alone', () => {
    expect(run({}).messages).toEqual(convo);
  });

  it('strict_alternating keeps leading system, turns later system into user, adds a placeholder, merges', () => {
    const { messages, trace } = run({ structure: { mode: 'strict_alternating' } });
    expect(messages).toEqual([
      { role: 'system', content: 'Sys' },
      { role: 'user', content: '[Start a new Chat]' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Note\n\nHi\n\nAgain' },
    ]);
    expect(trace.placeholder_inserted).toBe(true);
    for (let i = 2; i < messages.length; i++) expect(messages[i].role).not.toBe(messages[i - 1].role);
  });

  it('no_assistant rewrites assistant turns to system or into a user transcript', () => {
    expect(run({ structure: { mode: 'no_assistant' } }).messages[1]).toEqual({
      role: 'system',
      content: 'Hello',
    });
    expect(
      run({ structure: { mode: 'no_assistant', assistant_rewrite_strategy: 'to_user_transcript' } })
        .messages[1],
    ).toEqual({ role: 'user', content: 'Bot: Hello' });
  });

  it('flattened folds the conversation into one transcript, prefill included', () => {
    const { messages, trace } = run(
      { structure: { mode: 'flattened' } },
      [...convo, { role: 'assistant', content: 'Sure,' }],
      true,
    );
    expect(messages).toEqual([
      { role: 'system', content: 'Sys' },
      { role: 'user', content: 'Bot: Hello\n\nNote\n\nAnn: Hi\n\nAnn: Again\n\nBot: Sure,' },
    ]);
    expect(trace).toMatchObject({
      transcriptized: true,
      transcript_message_count: 4,
      assistant_prefill_transcriptized: true,
      assistant_prefill_strategy: 'transcript_append',
    });
  });

  it('a refused prefill is appended to the last user message', () => {
    const { messages, trace } = run(
      { delivery: { allow_assistant_prefill: false } },
      [...convo, { role: 'assistant', content: 'Sure,' }],
      true,
    );
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Again\n\nBot: Sure,' });
    expect(trace.assistant_prefill_strategy).toBe('transcript_append');
  });

  it('require_last_user ends the request on a user message', () => {
    const { messages } = run({ delivery: { require_last_user: true } }, [
      ...convo,
      { role: 'system', content: 'JB' },
    ]);
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Again\n\nJB' });
  });

  it('merge_adjacent_same_role merges runs of one role', () => {
    const { messages, trace } = run({ structure: { merge_adjacent_same_role: true } });
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'Hi\n\nAgain' });
    expect(trace.merged_count).toBe(1);
  });
});

describe('history selection (visibility and source selection)', () => {
  const history = Array.from({ length: 10 }, (_, i) => ({ floor_no: i, text: `m${i}`, is_hidden: i === 1 }));
  it('drops hidden messages and hidden floor ranges, recording why', () => {
    const r = selectHistory(
      history,
      withPolicy({ visibility: { hidden_floor_ranges: [{ start_floor_no: 3, end_floor_no: 4 }] } }),
    );
    expect(r.history.map((m) => m.floor_no)).toEqual([0, 2, 5, 6, 7, 8, 9]);
    expect(r.excluded_sources).toEqual([
      { kind: 'history', reason: 'hidden_message', count: 1 },
      { kind: 'history', reason: 'hidden_floor_range', count: 2 },
    ]);
  });
  it('deny_all_except_visible keeps only the listed ranges', () => {
    const r = selectHistory(
      history,
      withPolicy({
        visibility: {
          mode: 'deny_all_except_visible',
          hidden_floor_ranges: [{ start_floor_no: 7, end_floor_no: 9 }],
        },
      }),
    );
    expect(r.history.map((m) => m.floor_no)).toEqual([7, 8, 9]);
  });
  it('a windowed history keeps the newest max_messages', () => {
    const r = selectHistory(
      history,
      withPolicy({ source_selection: { history: { mode: 'windowed', max_messages: 3 } } }),
    );
    expect(r.history.map((m) => m.floor_no)).toEqual([7, 8, 9]);
    expect(r.excluded_sources).toContainEqual({ kind: 'history', reason: 'history_window', count: 6 });
  });
});
