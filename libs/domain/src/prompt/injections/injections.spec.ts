import type { AnnotatedMessage } from '../assembly/chat-completion';
import { tokenCounter } from '../shared/token-counter';
import {
  anchorInjections,
  INJECTION_LIMITS,
  planInjections,
  summariseInjections,
  trimInjectionTrace,
  type InjectionItem,
  type PromptMode,
} from './injections';

const tokens = tokenCounter();
const item = (over: Partial<InjectionItem> = {}): InjectionItem => ({
  scope: 'request',
  source_kind: 'client_injection',
  title: 'T',
  content: 'Injected text',
  placement: 'after_system_prompt',
  ...over,
});
const plan = (items: InjectionItem[], mode: PromptMode = 'compat_strict', now = 1000) =>
  planInjections(items, { mode, now, tokens });

const msg = (slot: string, content: string, extra: Partial<AnnotatedMessage> = {}): AnnotatedMessage => ({
  role: 'system',
  content,
  identifier: slot,
  slot,
  tokens: 1,
  ...extra,
});
const prompt: AnnotatedMessage[] = [
  msg('main', 'MAIN'),
  msg('charDescription', 'DESC'),
  msg('dialogueExamples', '[Example Chat]', { identifier: 'newChat' }),
  msg('chatHistory', '[Start]', { identifier: 'newMainChat' }),
  msg('chatHistory', 'f1', { role: 'user', identifier: 'chatHistory', floor_no: 1 }),
  msg('chatHistory', 'f2', { role: 'assistant', identifier: 'chatHistory', floor_no: 2 }),
  msg('chatHistory', 'now', { role: 'user', identifier: 'chatHistory', floor_no: 3, current_input: true }),
  msg('jailbreak', 'JB'),
];

describe('injection planning (spec 2 not_applied_reason values)', () => {
  it.each<[string, Partial<InjectionItem>, PromptMode, string]>([
    ['disabled', { enabled: false }, 'compat_strict', 'disabled'],
    ['expired', { expires_at: 999 }, 'compat_strict', 'expired'],
    ['mode_scope_mismatch', { mode_scope: 'native' }, 'compat_strict', 'mode_scope_mismatch'],
    ['unknown_placement', { placement: 'sideways' }, 'compat_strict', 'unknown_placement'],
    [
      'placement_not_available_in_mode',
      { placement: 'worldbook_before' },
      'compat_strict',
      'placement_not_available_in_mode',
    ],
    [
      'contributor blocks only in native',
      { placement: 'before_contributor_block' },
      'compat_plus',
      'placement_not_available_in_mode',
    ],
    ['empty_title_or_content', { title: '  ' }, 'compat_strict', 'empty_title_or_content'],
    ['missing_placement_params', { placement: 'before_floor' }, 'compat_strict', 'missing_placement_params'],
    [
      'invalid_placement_params',
      { placement: 'after_floor', placement_params: { floor_no: -1 } },
      'compat_strict',
      'invalid_placement_params',
    ],
    ['invalid params shape', { placement_params: 'x' }, 'compat_strict', 'invalid_placement_params'],
    [
      'content_length_exceeded',
      { content: 'a'.repeat(INJECTION_LIMITS.content_chars + 1) },
      'compat_strict',
      'content_length_exceeded',
    ],
  ])('%s', (_name, over, mode, reason) => {
    const { planned, trace } = plan([item(over)], mode);
    expect(planned).toHaveLength(0);
    expect(trace[0].not_applied_reason).toBe(reason);
    expect(trace[0].applied).toBe(false);
  });

  it('accepts content at 8000 characters, refuses a 2001-token item and stops at 4000 tokens in total', () => {
    expect(plan([item({ content: 'a '.repeat(4000) })]).trace[0].not_applied_reason).not.toBe(
      'content_length_exceeded',
    );
    const big = 'word '.repeat(1500); // ~1500 tokens
    const { trace } = plan([
      item({ content: 'a '.repeat(2100), order: 1 }),
      item({ content: big, order: 2 }),
      item({ content: big, order: 3 }),
      item({ content: big, order: 4 }),
    ]);
    expect(trace.map((t) => t.budget_status)).toEqual([
      'rejected_by_item_limit',
      'within_budget',
      'within_budget',
      'rejected_by_total_limit',
    ]);
    expect(trace[0].not_applied_reason).toBe('content_token_limit_exceeded');
    expect(trace[3].not_applied_reason).toBe('total_token_limit_exceeded');
  });

  it('enforces 32 per request and 128 per persistent scope', () => {
    const request = plan(Array.from({ length: 33 }, () => item()));
    expect(request.trace.filter((t) => t.not_applied_reason === 'scope_quota_exceeded')).toHaveLength(1);
    const session = plan(Array.from({ length: 129 }, () => item({ scope: 'session', content: 'x' })));
    expect(session.trace[128].not_applied_reason).toBe('scope_quota_exceeded');
    expect(session.planned).toHaveLength(128);
  });
});

describe('injection anchoring', () => {
  const place = (items: InjectionItem[]) => {
    const { planned, trace } = plan(items);
    const out = anchorInjections(prompt, planned, [1, 2, 3], tokens);
    return { out: out.map((m) => m.content), trace };
  };

  it('places common placements next to their sections, lower order first', () => {
    const { out, trace } = place([
      item({ placement: 'after_system_prompt', content: 'A2', order: 200 }),
      item({ placement: 'after_system_prompt', content: 'A1', order: 10 }),
      item({ placement: 'before_history', content: 'BH' }),
      item({ placement: 'before_current_user_input', content: 'BU' }),
      item({ placement: 'before_output_instruction', content: 'BO' }),
      item({ placement: 'before_character', content: 'BC' }),
    ]);
    expect(out).toEqual([
      'MAIN',
      'A1',
      'A2',
      'BC',
      'DESC',
      '[Example Chat]',
      'BH',
      '[Start]',
      'f1',
      'f2',
      'BU',
      'now',
      'BO',
      'JB',
    ]);
    expect(trace.every((t) => t.applied)).toBe(true);
    expect(trace[2].anchor_resolved).toBe('chatHistory');
  });

  it('anchors floors by number and from the end, and reports floors outside the window', () => {
    const { out, trace } = place([
      item({ placement: 'after_floor', placement_params: { floor_no: 1 }, content: 'AF1' }),
      item({ placement: 'before_floor_from_end', placement_params: { offset: 0 }, content: 'BFE0' }),
      item({ placement: 'before_floor', placement_params: { floor_no: 9 }, content: 'X' }),
      item({ placement: 'after_floor_from_end', placement_params: { offset: 3 }, content: 'Y' }),
    ]);
    expect(out.slice(4, 9)).toEqual(['f1', 'AF1', 'f2', 'BFE0', 'now']);
    expect(trace[2].not_applied_reason).toBe('floor_no_out_of_history_window');
    expect(trace[3].not_applied_reason).toBe('floor_offset_out_of_history_window');
  });

  it('reports a missing section as prompt_section_absent', () => {
    const { trace } = place([
      item({ placement: 'before_persona' }),
      item({ placement: 'before_assistant_prefill' }),
    ]);
    expect(trace.map((t) => t.not_applied_reason)).toEqual([
      'prompt_section_absent',
      'prompt_section_absent',
    ]);
  });

  it('summarises and trims restricted sources', () => {
    const { trace } = place([item(), item({ source_kind: 'agent_injection', source_chain: ['agent_x'] })]);
    const summary = summariseInjections(trace);
    expect(summary).toMatchObject({
      requested_count: 2,
      applied_count: 2,
      rejected_count: 0,
      budget_group: 'injection',
    });
    const trimmed = trimInjectionTrace(trace);
    expect(trimmed[0]).toMatchObject({ title: 'T', restricted: false });
    expect(trimmed[1]).toMatchObject({
      title: null,
      source_chain: null,
      restricted: true,
      visibility: 'agent_private',
    });
    expect(trimInjectionTrace(trace, true)[1]).toMatchObject({
      title: 'T',
      source_chain: ['agent_x'],
      restricted: true,
    });
  });
});
