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
  const grouped = new Map<string, RunEntry[]>();
  for (const e of newEntries)
    for (const g of e.view.groups) {
      const members = grouped.get(g) ?? [];
      members.push(e);
      grouped.set(g, members);
    }
  if (grouped.size === 0) return [...newEntries];
  // ST's `splice(indexOf(entry), 1)` without its linear search and shift per removal (32,000 members of one
  // group took 2.6 s): a removed entry leaves the live set; removing an absent one removes the last live
  // entry (`splice(-1, 1)`), found by a pointer that only moves towards the start.
  const live = new Set(newEntries);
  let last = newEntries.length - 1;
  const removeEntry = (e: RunEntry) => {
    if (live.delete(e)) return;
    while (last >= 0 && !live.has(newEntries[last]!)) last--;
    if (last >= 0) live.delete(newEntries[last]!);
  };
  const removeAllBut = (group: RunEntry[], keep: RunEntry | null) => {
    for (const e of group) if (e !== keep) removeEntry(e);
  };

  // filterGroupsByTimedEffects
  const hasSticky = new Map<string, boolean>();
  for (const [key, group] of grouped) {
    hasSticky.set(key, false);
    const sticky = new Set(group.filter((e) => timed.isActive('sticky', e.view)));
    if (sticky.size > 0) {
      for (const e of group) if (!sticky.has(e)) removeEntry(e);
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
    let max = -Infinity;
    for (const s of scores) if (s > max) max = s;
    const kept: RunEntry[] = [];
    group.forEach((e, i) => {
      const scored = e.view.useGroupScoring ?? ctx.useGroupScoring;
      if (scored && scores[i]! < max) removeEntry(e);
      else kept.push(e);
    });
    group.length = 0;
    for (const e of kept) group.push(e);
  }

  const earlierGroups = new Set(ctx.earlier.map((a) => a.view.groupRaw));
  for (const [key, group] of grouped) {
    if (hasSticky.get(key)) continue;
    if (earlierGroups.has(key)) {
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
  return newEntries.filter((e) => live.has(e));
}
