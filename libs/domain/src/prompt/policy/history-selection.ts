import type { PromptPolicy } from './policy';

/**
 * The source-selection and visibility sections applied to the branch history before assembly (spec 2):
 * `hidden_floor_ranges` hide floors (mode `allow_all_except_hidden`) or are the only visible ones (mode
 * `deny_all_except_visible`, where the ranges list what is visible); a `windowed` history keeps the
 * newest `max_messages` messages. Every exclusion is recorded.
 */
export interface SelectableMessage {
  floor_no: number;
  /** Hidden by the user (ST `is_system: true`): never sent. */
  is_hidden?: boolean;
}

export interface ExcludedSource {
  kind: 'history';
  reason: 'hidden_message' | 'hidden_floor_range' | 'not_in_visible_range' | 'history_window';
  count: number;
}

export function selectHistory<T extends SelectableMessage>(
  history: T[],
  policy: PromptPolicy,
): { history: T[]; excluded_sources: ExcludedSource[] } {
  const excluded = new Map<ExcludedSource['reason'], number>();
  const bump = (reason: ExcludedSource['reason']) => excluded.set(reason, (excluded.get(reason) ?? 0) + 1);
  const inRanges = (floorNo: number) =>
    policy.visibility.hidden_floor_ranges.some(
      (r) => floorNo >= r.start_floor_no && floorNo <= r.end_floor_no,
    );
  let kept = history.filter((m) => {
    if (m.is_hidden) {
      bump('hidden_message');
      return false;
    }
    if (policy.visibility.mode === 'allow_all_except_hidden' && inRanges(m.floor_no)) {
      bump('hidden_floor_range');
      return false;
    }
    if (policy.visibility.mode === 'deny_all_except_visible' && !inRanges(m.floor_no)) {
      bump('not_in_visible_range');
      return false;
    }
    return true;
  });
  const max = policy.source_selection.history.max_messages;
  if (policy.source_selection.history.mode === 'windowed' && max !== null && kept.length > max) {
    for (let i = 0; i < kept.length - max; i++) bump('history_window');
    kept = kept.slice(kept.length - max);
  }
  return {
    history: kept,
    excluded_sources: [...excluded.entries()].map(([reason, count]) => ({ kind: 'history', reason, count })),
  };
}
