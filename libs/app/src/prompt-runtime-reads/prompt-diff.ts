import type { PromptSnapshot } from '@hearth/domain/prompt/engine';

type SnapshotMessage = PromptSnapshot['messages'][number];

export interface MessageDiff {
  /** Messages only the target has (indices of the target, past the base's length). */
  added: Array<{ index: number } & SnapshotMessage>;
  /** Messages only the base has (indices of the base, past the target's length). */
  removed: Array<{ index: number } & SnapshotMessage>;
  /** Same index, different role, name or content. */
  changed: Array<{ index: number; fields: string[]; base: SnapshotMessage; target: SnapshotMessage }>;
  unchanged_count: number;
}

export interface SetDiff<T> {
  added: T[];
  removed: T[];
  common: T[];
}

/** The prompt difference of two committed floors, from their stored snapshots only. */
export interface PromptDiff {
  identical: boolean;
  messages: MessageDiff;
  worldbook: {
    activated_uids: SetDiff<number>;
    activated_entries: SetDiff<{ worldbook_id: string; uid: number }>;
  };
  regex: { pre_rule_names: SetDiff<string>; post_rule_names: SetDiff<string> };
  token_estimate: { base: number; target: number; delta: number };
  prompt_mode: { base: string; target: string; changed: boolean };
  assets: {
    preset: AssetChange;
    regex_profile: AssetChange;
    worldbook_ids: SetDiff<string>;
  };
}

export interface AssetChange {
  base: { id: string | null; version: number | null };
  target: { id: string | null; version: number | null };
  changed: boolean;
}

/** Messages compared by index (spec: "added/removed/changed by index"). */
export function diffMessages(base: SnapshotMessage[], target: SnapshotMessage[]): MessageDiff {
  const diff: MessageDiff = { added: [], removed: [], changed: [], unchanged_count: 0 };
  const common = Math.min(base.length, target.length);
  for (let index = 0; index < common; index++) {
    const a = base[index];
    const b = target[index];
    const fields = (['role', 'name', 'content'] as const).filter((f) => (a[f] ?? null) !== (b[f] ?? null));
    if (fields.length === 0) diff.unchanged_count++;
    else diff.changed.push({ index, fields: [...fields], base: a, target: b });
  }
  for (let index = common; index < target.length; index++) diff.added.push({ index, ...target[index] });
  for (let index = common; index < base.length; index++) diff.removed.push({ index, ...base[index] });
  return diff;
}

/** Set difference keeping first-seen order (by a key for objects). */
export function diffSets<T>(
  base: readonly T[],
  target: readonly T[],
  key: (v: T) => string = String,
): SetDiff<T> {
  const baseKeys = new Set(base.map(key));
  const targetKeys = new Set(target.map(key));
  const unique = (list: readonly T[]) => {
    const seen = new Set<string>();
    return list.filter((v) => !seen.has(key(v)) && seen.add(key(v)));
  };
  return {
    added: unique(target).filter((v) => !baseKeys.has(key(v))),
    removed: unique(base).filter((v) => !targetKeys.has(key(v))),
    common: unique(base).filter((v) => targetKeys.has(key(v))),
  };
}

const entriesOf = (s: PromptSnapshot) =>
  Object.entries(s.worldbook_activated_entries ?? {}).flatMap(([worldbook_id, uids]) =>
    uids.map((uid) => ({ worldbook_id, uid })),
  );

const assetChange = (
  a: { id: string | null; version: number | null },
  b: { id: string | null; version: number | null },
): AssetChange => ({ base: a, target: b, changed: a.id !== b.id || a.version !== b.version });

export function diffPromptSnapshots(base: PromptSnapshot, target: PromptSnapshot): PromptDiff {
  return {
    identical: base.prompt_digest === target.prompt_digest,
    messages: diffMessages(base.messages ?? [], target.messages ?? []),
    worldbook: {
      activated_uids: diffSets(
        base.worldbook_activated_entry_uids ?? [],
        target.worldbook_activated_entry_uids ?? [],
      ),
      activated_entries: diffSets(entriesOf(base), entriesOf(target), (e) => `${e.worldbook_id}\n${e.uid}`),
    },
    regex: {
      pre_rule_names: diffSets(base.regex_pre_rule_names ?? [], target.regex_pre_rule_names ?? []),
      post_rule_names: diffSets(base.regex_post_rule_names ?? [], target.regex_post_rule_names ?? []),
    },
    token_estimate: {
      base: base.token_estimate,
      target: target.token_estimate,
      delta: target.token_estimate - base.token_estimate,
    },
    prompt_mode: {
      base: base.prompt_mode,
      target: target.prompt_mode,
      changed: base.prompt_mode !== target.prompt_mode,
    },
    assets: {
      preset: assetChange(
        { id: base.preset_id, version: base.preset_version },
        { id: target.preset_id, version: target.preset_version },
      ),
      regex_profile: assetChange(
        { id: base.regex_profile_id, version: base.regex_profile_version },
        { id: target.regex_profile_id, version: target.regex_profile_version },
      ),
      worldbook_ids: diffSets(base.worldbook_ids ?? [], target.worldbook_ids ?? []),
    },
  };
}
