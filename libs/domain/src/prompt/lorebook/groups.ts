import type { RandomSource } from '../shared/seeded-random';
import { byOrderDesc, type RunEntry } from './run-entry';
import type { TimedEffects } from './timed-effects';

export interface GroupContext {
  timed: TimedEffects;
  /** Global `useGroupScoring` (an entry's own value wins for that entry). */
  useGroupScoring: boolean;
  random: RandomSource;
  /** Entries activated in earlier passes. */
  earlier: RunEntry[];
  /** ST `getScore` of an entry against this pass's scan text. */
  score: (entry: RunEntry) => number;
}

/**
 * §d.5.2 inclusion groups, as ST 1.18 world-info.js `filterByInclusionGroups` with
 * `filterGroupsByTimedEffects` and `filterGroupsByScoring`: a group holding a sticky entry drops its other
 * entries and is then left alone (no scoring, no earlier-activation check, no roll, even with several sticky
 * entries); scoring, the earlier-activation check, the override and the weighted pick run on the others.
 * Entries are removed the way ST removes them, `newEntries.splice(newEntries.indexOf(entry), 1)`: removing an
 * entry a second time (it lost in two of its groups) finds nothing, and `splice(-1, 1)` then drops the last
 * entry of the pass instead.
 */
export function filterByInclusionGroups(newEntries: RunEntry[], ctx: GroupContext): RunEntry[] {
  const { timed, random } = ctx;
  const list = [...newEntries];
  const grouped = new Map<string, RunEntry[]>();
  for (const e of newEntries)
    for (const g of e.view.groups) {
      const members = grouped.get(g) ?? [];
      members.push(e);
      grouped.set(g, members);
    }
  if (grouped.size === 0) return list;
  const removeEntry = (e: RunEntry) => {
    list.splice(list.indexOf(e), 1);
  };
  const removeAllBut = (group: RunEntry[], keep: RunEntry | null) => {
    for (const e of group) if (e !== keep) removeEntry(e);
  };

  // filterGroupsByTimedEffects
  const hasSticky = new Map<string, boolean>();
  for (const [key, group] of grouped) {
    hasSticky.set(key, false);
    const sticky = group.filter((e) => timed.isActive('sticky', e.view));
    if (sticky.length > 0) {
      for (const e of group) if (!sticky.includes(e)) removeEntry(e);
      hasSticky.set(key, true);
    }
    for (const e of group.filter((x) => timed.isActive('cooldown', x.view))) removeEntry(e);
    for (const e of group.filter((x) => timed.isActive('delay', x.view))) removeEntry(e);
  }

  // filterGroupsByScoring (losers leave the group too)
  for (const [key, group] of grouped) {
    if (!ctx.useGroupScoring && !group.some((e) => e.view.useGroupScoring)) continue;
    if (hasSticky.get(key)) continue;
    const scores = group.map((e) => ctx.score(e));
    const max = Math.max(...scores);
    for (let i = 0; i < group.length; i++) {
      const scored = group[i]!.view.useGroupScoring ?? ctx.useGroupScoring;
      if (!scored) continue;
      if (scores[i]! < max) {
        removeEntry(group[i]!);
        group.splice(i, 1);
        scores.splice(i, 1);
        i--;
      }
    }
  }

  const earlier = ctx.earlier;
  for (const [key, group] of grouped) {
    if (hasSticky.get(key)) continue;
    if (earlier.some((a) => a.view.groupRaw === key)) {
      removeAllBut(group, null);
      continue;
    }
    if (group.length <= 1) continue;
    const prios = group.filter((e) => e.view.groupOverride).sort(byOrderDesc);
    if (prios.length > 0) {
      removeAllBut(group, prios[0]!);
      continue;
    }
    const total = group.reduce((sum, e) => sum + e.view.groupWeight, 0);
    const roll = random() * total;
    let current = 0;
    let winner: RunEntry | null = null;
    for (const e of group) {
      current += e.view.groupWeight;
      if (roll <= current) {
        winner = e;
        break;
      }
    }
    if (!winner) continue;
    removeAllBut(group, winner);
  }
  return list;
}
