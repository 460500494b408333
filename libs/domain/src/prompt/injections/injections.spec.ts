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

  describe('token limits at the edge (2000 per item, 4000 in total, by the engine counter)', () => {
    /**
     * A text the engine counts as exactly `n` tokens, checked, not assumed: "a" and "\n" are one o200k
     * token each, and the counter's pieces (cut after a newline) split no token.
     */
    const textOf = (n: number) => {
      const text = 'a\n'.repeat(Math.floor(n / 2)) + (n % 2 ? 'a' : '');
      expect(tokens.count(text)).toBe(n);
      return text;
    };

    it('an item of exactly 2000 tokens is applied; one of 2001 is content_token_limit_exceeded', () => {
      const { planned, trace } = plan([
        item({ content: textOf(2000), order: 1 }),
        item({ content: textOf(2001), order: 2 }),
      ]);
      expect(planned.map((p) => p.index)).toEqual([0]);
      expect(trace[0]).toMatchObject({
        token_count: 2000,
        budget_status: 'within_budget',
        not_applied_reason: null,
      });
      expect(trace[1]).toMatchObject({
        token_count: 2001,
        budget_status: 'rejected_by_item_limit',
        not_applied_reason: 'content_token_limit_exceeded',
        applied: false,
      });
    });

    it('the same item limit holds for persistent (session and branch) records', () => {
      const { planned, trace } = plan([
        item({ scope: 'session', content: textOf(2000) }),
        item({ scope: 'branch', content: textOf(2001) }),
      ]);
      expect(planned).toHaveLength(1);
      expect(trace.map((t) => t.not_applied_reason)).toEqual([null, 'content_token_limit_exceeded']);
    });

    it('a total of exactly 4000 tokens is applied; a total of 4001 rejects the item that passes it', () => {
      const exact = plan([
        item({ scope: 'session', content: textOf(2000) }),
        item({ content: textOf(1999) }),
        item({ content: textOf(1) }),
      ]);
      expect(exact.planned).toHaveLength(3);
      expect(exact.trace.map((t) => t.budget_status)).toEqual([
        'within_budget',
        'within_budget',
        'within_budget',
      ]);
      expect(exact.trace.reduce((n, t) => n + t.token_count, 0)).toBe(4000);

      const over = plan([
        item({ scope: 'session', content: textOf(2000) }),
        item({ content: textOf(2000) }),
        item({ content: textOf(1) }),
      ]);
      expect(over.planned.map((p) => p.index)).toEqual([0, 1]);
      expect(over.trace[2]).toMatchObject({
        token_count: 1,
        budget_status: 'rejected_by_total_limit',
        not_applied_reason: 'total_token_limit_exceeded',
        applied: false,
      });
    });

    it('an item refused by the item limit uses none of the total', () => {
      const { planned, trace } = plan([
        item({ content: textOf(2001) }),
        item({ content: textOf(2000) }),
        item({ content: textOf(2000) }),
      ]);
      expect(planned.map((p) => p.index)).toEqual([1, 2]);
      expect(trace.map((t) => t.not_applied_reason)).toEqual(['content_token_limit_exceeded', null, null]);
    });
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
