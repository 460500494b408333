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

/** §d.5.2 inclusion groups: timed effects, scoring, earlier activation, override, weighted pick. */
export function filterByInclusionGroups(newEntries: RunEntry[], ctx: GroupContext): RunEntry[] {
  const { timed, random } = ctx;
  const grouped = new Map<string, RunEntry[]>();
  for (const e of newEntries)
    for (const g of e.view.groups) {
      const list = grouped.get(g) ?? [];
      list.push(e);
      grouped.set(g, list);
    }
  if (grouped.size === 0) return newEntries;
  const removed = new Set<RunEntry>();
  const removeAllBut = (group: RunEntry[], keep: RunEntry | null) => {
    for (const e of group) if (e !== keep) removed.add(e);
  };

  for (const [key, group] of grouped) {
    const sticky = group.filter((e) => timed.isActive('sticky', e.view));
    if (sticky.length > 0) {
      removeAllBut(
        group.filter((e) => !sticky.includes(e)),
        null,
      );
      grouped.set(key, sticky);
      continue;
    }
    const usable = group.filter(
      (e) => !timed.isActive('cooldown', e.view) && !timed.isActive('delay', e.view),
    );
    removeAllBut(
      group.filter((e) => !usable.includes(e)),
      null,
    );
    grouped.set(key, usable);
  }

  for (const [key, group] of grouped) {
    if (!ctx.useGroupScoring && !group.some((e) => e.view.useGroupScoring === true)) continue;
    const scores = group.map((e) => ctx.score(e));
    const max = Math.max(...scores);
    const kept = group.filter((e, i) => {
      const scored = e.view.useGroupScoring ?? ctx.useGroupScoring;
      if (scored && scores[i] < max) {
        removed.add(e);
        return false;
      }
      return true;
    });
    grouped.set(key, kept);
  }

  const earlier = ctx.earlier;
  for (const [key, group] of grouped) {
    if (earlier.some((a) => a.view.groupRaw === key)) {
      removeAllBut(group, null);
      continue;
    }
    if (group.length <= 1) continue;
    const prios = group.filter((e) => e.view.groupOverride).sort(byOrderDesc);
    if (prios.length > 0) {
      removeAllBut(group, prios[0]);
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
  return newEntries.filter((e) => !removed.has(e));
}
