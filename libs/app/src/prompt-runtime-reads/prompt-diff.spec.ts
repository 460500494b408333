import type { PromptSnapshot } from '@hearth/domain/prompt/engine';
import { diffMessages, diffPromptSnapshots, diffSets } from './prompt-diff';

const snapshot = (overrides: Partial<PromptSnapshot> = {}): PromptSnapshot => ({
  preset_id: 'prs_1',
  preset_updated_at: 1,
  preset_version: 1,
  worldbook_id: null,
  worldbook_updated_at: null,
  worldbook_version: null,
  worldbook_ids: ['wb_a'],
  regex_profile_id: null,
  regex_profile_updated_at: null,
  regex_profile_version: null,
  worldbook_activated_entry_uids: [1, 2],
  worldbook_activated_entries: { wb_a: [1, 2] },
  regex_pre_rule_names: ['a'],
  regex_post_rule_names: [],
  prompt_mode: 'compat_strict',
  prompt_digest: 'sha256:x',
  token_estimate: 100,
  messages: [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'U' },
  ],
  ...overrides,
});

describe('prompt diff', () => {
  it('compares messages by index: changed fields, added past the base, removed past the target', () => {
    const base = [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'assistant', content: 'A' },
    ];
    const target = [
      { role: 'system', content: 'S' },
      { role: 'system', content: 'U' },
    ];
    expect(diffMessages(base, target)).toEqual({
      added: [],
      removed: [{ index: 2, role: 'assistant', content: 'A' }],
      changed: [{ index: 1, fields: ['role'], base: base[1], target: target[1] }],
      unchanged_count: 1,
    });
    expect(diffMessages(target, base).added).toEqual([{ index: 2, role: 'assistant', content: 'A' }]);
  });

  it('diffs sets keeping first-seen order and dropping repeats', () => {
    expect(diffSets([1, 2, 2, 3], [3, 4, 4, 1])).toEqual({ added: [4], removed: [2], common: [1, 3] });
  });

  it('reports activated entries per book, rule names, tokens, mode and asset versions', () => {
    const diff = diffPromptSnapshots(
      snapshot(),
      snapshot({
        prompt_digest: 'sha256:y',
        worldbook_activated_entry_uids: [2, 3],
        worldbook_activated_entries: { wb_a: [2], wb_b: [3] },
        regex_pre_rule_names: ['b'],
        token_estimate: 130,
        preset_version: 2,
        prompt_mode: 'native',
      }),
    );
    expect(diff.identical).toBe(false);
    expect(diff.worldbook.activated_uids).toEqual({ added: [3], removed: [1], common: [2] });
    expect(diff.worldbook.activated_entries).toEqual({
      added: [{ worldbook_id: 'wb_b', uid: 3 }],
      removed: [{ worldbook_id: 'wb_a', uid: 1 }],
      common: [{ worldbook_id: 'wb_a', uid: 2 }],
    });
    expect(diff.regex.pre_rule_names).toEqual({ added: ['b'], removed: ['a'], common: [] });
    expect(diff.token_estimate).toEqual({ base: 100, target: 130, delta: 30 });
    expect(diff.prompt_mode).toEqual({ base: 'compat_strict', target: 'native', changed: true });
    expect(diff.assets.preset.changed).toBe(true);
    expect(diff.assets.regex_profile.changed).toBe(false);
    expect(diffPromptSnapshots(snapshot(), snapshot()).identical).toBe(true);
  });
});
