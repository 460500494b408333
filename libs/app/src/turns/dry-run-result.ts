import type { PromptEngineResult } from '@hearth/domain/prompt/engine';
import { trimInjectionTrace } from '@hearth/domain/prompt/injections';
import type { TurnContextWarning } from './turn-context.types';

/**
 * Spec 2 dry-run `memory`: Hearth has no memory yet, so nothing is selected, injected or written; the
 * structure is complete so clients can read it unchanged once memory exists.
 */
export interface DryRunMemory {
  summary_injected: false;
  runtime_mode: 'disabled';
  requested_write: false;
  effective_write: false;
  strategy: 'none';
  summary_text: null;
  summary_text_hash: null;
  selected_items: [];
  token_stats: {
    budget: number;
    used: number;
    micro_summary: number;
    macro_summary: number;
    direct_items: number;
  };
  scope_resolution: { enabled_by_policy: boolean; available: false; reason: 'memory_not_available' };
}

/** `{data}` of `POST /sessions/:id/respond/dry-run` (spec 2 "Dry-run result") plus loading warnings. */
export interface DryRunResult {
  messages: Array<{ role: string; content: string; name?: string }>;
  token_estimate: number;
  available_for_reply: number;
  memory: DryRunMemory;
  memory_summary: null;
  prompt_snapshot: PromptSnapshotView;
  assembly: PromptEngineResult['assembly'];
  runtime_trace: PromptEngineResult['runtime_trace'];
  /** Beyond the spec: problems that did not stop the assembly (skipped library objects, engine warnings). */
  warnings: Array<{ code: string; message: string; [key: string]: unknown }>;
}

export function dryRunMemory(result: PromptEngineResult): DryRunMemory {
  return {
    summary_injected: false,
    runtime_mode: 'disabled',
    requested_write: false,
    effective_write: false,
    strategy: 'none',
    summary_text: null,
    summary_text_hash: null,
    selected_items: [],
    token_stats: { budget: 0, used: 0, micro_summary: 0, macro_summary: 0, direct_items: 0 },
    scope_resolution: {
      enabled_by_policy: result.runtime_trace.policy.resolved.source_selection.memory.enabled,
      available: false,
      reason: 'memory_not_available',
    },
  };
}

/**
 * The trace as a client may see it: injection items of restricted sources lose title and source chain
 * unless `includeRestricted` (an owner's inspect with `include_restricted_injection_content`).
 */
export function visibleRuntimeTrace(
  trace: PromptEngineResult['runtime_trace'],
  includeRestricted = false,
): PromptEngineResult['runtime_trace'] {
  return {
    ...trace,
    injection: { ...trace.injection, items: trimInjectionTrace(trace.injection.items, includeRestricted) },
  };
}

/** Spec 2's `prompt_snapshot` fields: the snapshot without its copy of the messages (sent once, as `messages`). */
export type PromptSnapshotView = Omit<PromptEngineResult['prompt_snapshot'], 'messages'>;

export function promptSnapshotView(snapshot: PromptEngineResult['prompt_snapshot']): PromptSnapshotView {
  const { messages: _messages, ...view } = snapshot;
  return view;
}

/** The dry-run view of an engine result. `worldbook_matches` only with `include_worldbook_matches`. */
export function toDryRunResult(
  result: PromptEngineResult,
  options: { includeWorldbookMatches: boolean; includeRestricted?: boolean; warnings: TurnContextWarning[] },
): DryRunResult {
  return {
    messages: result.messages,
    token_estimate: result.token_estimate,
    available_for_reply: result.available_for_reply,
    memory: dryRunMemory(result),
    memory_summary: null,
    prompt_snapshot: promptSnapshotView(result.prompt_snapshot),
    assembly: {
      ...result.assembly,
      worldbook_matches: options.includeWorldbookMatches ? (result.assembly.worldbook_matches ?? []) : null,
    },
    runtime_trace: visibleRuntimeTrace(result.runtime_trace, options.includeRestricted === true),
    warnings: [...options.warnings, ...result.warnings],
  };
}
