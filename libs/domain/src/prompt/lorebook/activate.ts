import { forkRandom, type RandomSource } from '../shared/seeded-random';
import { tokenCounter, type TokenCounter } from '../shared/token-counter';
import { filterByInclusionGroups } from './groups';
import {
  keyMatches,
  keyMatchesAfterMiss,
  SCAN_UNITS,
  ScanMeter,
  type CompiledKey,
  type KeyMatchOptions,
} from './matcher';
import { placeLorebookEntries, lorebookRole } from './placement';
import { compiledKey, hasMacro } from './prepare';
import { sortedEntries, type RunEntry } from './run-entry';
import { ScanBuffer, type ScanText } from './scan-buffer';
import { LOREBOOK_MAX_SCAN_DEPTH, lorebookBudget, resolveLorebookSettings } from './settings';
import { cloneTimedState, TimedEffects } from './timed-effects';
import { describeMatch, matchItem } from './trace';
import type {
  ActivatedLorebookEntry,
  LorebookActivation,
  LorebookActivationInput,
  LorebookPassKind,
  LorebookWarning,
} from './types';

/**
 * SillyTavern 1.18 `checkWorldInfo` over several books at once (external-formats.md §d), as a pure function:
 * deterministic for a given seed, never throws on bad input (problems become warnings).
 */

/** Token slack per joined part when deciding whether the exact (whole-text) count is needed, §d.5. */
const TOKEN_SLACK_PER_PART = 8;
const TOKEN_SLACK_BASE = 16;
/**
 * Exact counts near the budget tokenize the whole new content (and, once per pass, the recursion text) again:
 * at most this many times the characters counted part by part, plus a base. Past it the budget decision uses
 * the last exact count plus the parts since (warning `lorebook_budget_estimated`). 20,000 one-token entries
 * all inside the slack window recounted ~10^9 characters (minutes); a normal pass recounts one to three times.
 */
const RECOUNT_CHARS_FACTOR = 4;
const RECOUNT_BASE_CHARS = 1_000_000;

export function activateLorebooks(input: LorebookActivationInput): LorebookActivation {
  const { settings, warnings: settingWarnings } = resolveLorebookSettings(input.settings);
  const warnings: LorebookWarning[] = [...settingWarnings];
  const substitute = typeof input.substitute === 'function' ? input.substitute : (t: string) => t;
  const counter: TokenCounter =
    input.tokenCounter && typeof input.tokenCounter.count === 'function'
      ? input.tokenCounter
      : tokenCounter();
  const random: RandomSource = forkRandom(String(input.seed ?? ''), 'lorebook');
  const debug = input.debug?.matches === true;
  const intent = typeof input.intent === 'string' ? input.intent : 'normal';

  const sorted = sortedEntries(input, settings, warnings);
  // Only the newest LOREBOOK_MAX_SCAN_DEPTH messages can ever be scanned (§d.2): the rest is never read.
  const allMessages = Array.isArray(input.messages) ? input.messages : [];
  const messageCount = allMessages.length;
  const newestFirst = allMessages
    .slice(Math.max(0, messageCount - LOREBOOK_MAX_SCAN_DEPTH))
    .map((m) => {
      const text = typeof m?.text === 'string' ? m.text : '';
      return settings.includeNames && typeof m?.name === 'string' && m.name ? `${m.name}: ${text}` : text;
    })
    .reverse();
  const chatLength =
    typeof input.chatLength === 'number' && Number.isFinite(input.chatLength)
      ? input.chatLength
      : messageCount;

  const { state: timedState, dropped } = cloneTimedState(input.timedState);
  if (dropped > 0)
    warnings.push({
      code: 'invalid_timed_state',
      message: `${dropped} malformed timed-effect record(s) were dropped`,
    });
  const timed = new TimedEffects(
    timedState,
    chatLength,
    sorted.map((e) => e.view),
    input.dryRun === true,
  );
  timed.check();

  const sources: Record<string, string> = {};
  const scanSources = input.scanSources && typeof input.scanSources === 'object' ? input.scanSources : {};
  for (const [kind, text] of Object.entries(scanSources)) if (typeof text === 'string') sources[kind] = text;
  const injects = (Array.isArray(input.extensionPrompts) ? input.extensionPrompts : []).filter(
    (t): t is string => typeof t === 'string' && t.length > 0,
  );
  const meter = new ScanMeter();
  const buffer = new ScanBuffer(newestFirst, settings.scanDepth, sources, injects, meter);
  const budget = lorebookBudget(settings, input.maxPromptTokens);
  const forced = new Set(
    (Array.isArray(input.forcedActivations) ? input.forcedActivations : []).map(
      (f) => `${f?.bookId}.${f?.uid}`,
    ),
  );
  const character = input.character && typeof input.character === 'object' ? input.character : null;
  const characterTags = character ? (Array.isArray(character.tags) ? character.tags : []) : null;
  const characterFile = typeof character?.filename === 'string' ? character.filename : null;

  const warned = new Set<string>();
  const warnKey = (entry: RunEntry, key: CompiledKey) => {
    if (!key.warning) return;
    const id = `${entry.view.bookId}.${entry.view.uid}.${key.text}`;
    if (warned.has(id)) return;
    warned.add(id);
    warnings.push({ ...key.warning, bookId: entry.view.bookId, uid: entry.view.uid });
  };
  const resolveKeys = (entry: RunEntry, keys: string[], compiled: Array<CompiledKey | null> | null) => {
    const resolved =
      compiled ??
      keys.map((raw) => {
        const text = (hasMacro(raw) ? String(substitute(raw) ?? '') : raw).trim();
        return text ? compiledKey(entry.book, text) : null;
      });
    for (const key of resolved) if (key?.warning) warnKey(entry, key);
    return resolved;
  };
  const primaryKeys = (e: RunEntry) =>
    (e.primary ??= resolveKeys(e, e.view.keys, e.book.staticKeys[e.slot]?.primary ?? null));
  const secondaryKeys = (e: RunEntry) =>
    (e.secondary ??= resolveKeys(e, e.view.secondaryKeys, e.book.staticKeys[e.slot]?.secondary ?? null));
  const optionsFor = (e: RunEntry): KeyMatchOptions =>
    (e.options ??= {
      caseSensitive: e.view.caseSensitive ?? settings.caseSensitive,
      matchWholeWords: e.view.matchWholeWords ?? settings.matchWholeWords,
      meter,
    });
  const countContent = contentCounter(counter);
  const matches = (
    e: RunEntry,
    key: CompiledKey | null,
    text: ScanText,
    options: KeyMatchOptions,
    afterMiss = false,
  ): boolean => {
    if (!key) return false;
    const hit = afterMiss ? keyMatchesAfterMiss(key, text, options) : keyMatches(key, text, options);
    if (key.kind === 'regex' && key.regex.lastAborted) {
      const id = `${e.view.bookId}.${e.view.uid}.${key.text}.aborted`;
      if (!warned.has(id)) {
        warned.add(id);
        warnings.push({
          code: 'key_regex_aborted',
          message: `regex key ${key.text} exceeded its step budget and was treated as not matching`,
          bookId: e.view.bookId,
          uid: e.view.uid,
        });
      }
    }
    return hit;
  };

  type ScanState = LorebookPassKind | null;
  let scanState: ScanState = 'initial';
  let overflowed = false;
  let passes = 0;
  let recursionLevel = 0;
  const activated = new Map<string, RunEntry>();
  const activatedSet = new Set<RunEntry>();
  const activatedPass = new Map<RunEntry, { pass: LorebookPassKind; level: number }>();
  const failedProbability = new Set<RunEntry>();
  const triggerFiltered: Array<{ bookId: string; uid: number }> = [];
  let allActivatedText = '';
  // Token estimate of allActivatedText: its parts' counts (and the number of parts, for the slack), so a pass
  // that stays far from the budget never counts the whole text (each pass counted it: passes x text).
  let scanApprox = 0;
  let scanParts = 0;
  let countedChars = 0;
  let recountedChars = 0;

  // §d.6: distinct delay-until-recursion levels, ascending; the first is the starting level.
  const delayLevels = [...new Set(sorted.map((e) => e.view.delayUntilRecursion).filter((l) => l > 0))].sort(
    (a, b) => a - b,
  );
  let currentDelayLevel = delayLevels.shift() ?? 0;
  const entryKey = (e: RunEntry) => `${e.view.bookId}.${e.view.uid}`;

  while (scanState) {
    if (settings.maxRecursionSteps && settings.maxRecursionSteps <= passes) break;
    // Each pass visits every entry: with unlimited recursion steps, 2,000 delay levels made 2,000 passes over
    // 2,000 entries (5 s). The visits are scan work too; a pass the meter cannot pay for is not run.
    if (!meter.charge(sorted.length * SCAN_UNITS.entryVisit)) break;
    passes++;
    const state: LorebookPassKind = scanState;
    if (state === 'recursion') recursionLevel++;
    let nextState: ScanState = null;
    const activatedNow: RunEntry[] = [];
    const isMinPass = state === 'min_activations';

    for (const e of sorted) {
      const v = e.view;
      if (failedProbability.has(e) || activatedSet.has(e)) continue;
      if (v.disable) continue;
      if (v.triggers.length > 0 && !v.triggers.includes(intent)) {
        if (passes === 1) triggerFiltered.push({ bookId: v.bookId, uid: v.uid });
        continue;
      }
      if (v.characterFilter && v.characterFilter.names.length > 0) {
        const included = characterFile !== null && v.characterFilter.names.includes(characterFile);
        if (v.characterFilter.isExclude ? included : !included) continue;
      }
      if (v.characterFilter && v.characterFilter.tags.length > 0 && characterTags !== null) {
        const included = characterTags.some((t) => v.characterFilter!.tags.includes(t));
        if (v.characterFilter.isExclude ? included : !included) continue;
      }
      const isSticky = timed.isActive('sticky', v);
      if (timed.isActive('delay', v)) continue;
      if (timed.isActive('cooldown', v) && !isSticky) continue;
      if (state !== 'recursion' && v.delayUntilRecursion && !isSticky) continue;
      if (state === 'recursion' && v.delayUntilRecursion > currentDelayLevel && !isSticky) continue;
      if (state === 'recursion' && settings.recursive && v.excludeRecursion && !isSticky) continue;
      if (v.decorators.includes('@@activate')) {
        activatedNow.push(Object.assign(e, { mode: 'decorator' as const, firstMatch: null }));
        continue;
      }
      if (v.decorators.includes('@@dont_activate')) continue;
      if (v.constant) {
        activatedNow.push(Object.assign(e, { mode: 'constant' as const, firstMatch: null }));
        continue;
      }
      if (forced.size > 0 && forced.has(entryKey(e))) {
        activatedNow.push(Object.assign(e, { mode: 'forced' as const, firstMatch: null }));
        continue;
      }
      if (isSticky) {
        activatedNow.push(Object.assign(e, { mode: 'sticky' as const, firstMatch: null }));
        continue;
      }
      if (v.keys.length === 0) continue;

      const text = buffer.get(v.scanDepth, v.scanSourceMask, isMinPass);
      const options = optionsFor(e);
      const primary = primaryKeys(e);
      // No primary key matched this text's base (the previous pass's text): only the new part can hold one.
      const afterMiss = text.base !== null && e.missedOn === text.base;
      const primaryIndex = primary.findIndex((key) => matches(e, key, text, options, afterMiss));
      if (primaryIndex === -1) {
        e.missedOn = text;
        continue;
      }

      const hasSecondary = v.selective && v.secondaryKeys.length > 0;
      if (hasSecondary && !secondaryPasses(e, text, options)) continue;
      e.mode = 'key';
      e.firstMatch = debug ? describeMatch(primary[primaryIndex]!, text, options) : null;
      activatedNow.push(e);
    }

    // §d.5.1: sticky first, then sorted order.
    const newEntries = activatedNow
      .map((e) => ({ e, sticky: timed.isActive('sticky', e.view) ? 1 : 0 }))
      .sort((a, b) => b.sticky - a.sticky || a.e.index - b.e.index)
      .map((x) => x.e);
    let scanTokens: number | null = null;
    const survivors = filterByInclusionGroups(newEntries, {
      timed,
      useGroupScoring: settings.useGroupScoring,
      random,
      earlier: [...activated.values()],
      score: (e) => score(e, buffer.get(e.view.scanDepth, e.view.scanSourceMask, isMinPass)),
    });

    let newContent = '';
    let approxTokens = 0;
    let parts = 0;
    // The last exact count of newContent (at `parts` parts, when the estimate was `approx`).
    let exact = { tokens: 0, approx: 0, parts: 0 };
    const partTokens = new Map<RunEntry, number>();
    /**
     * ST's `textTokens + countTokens(newContent) >= budget`, counted exactly only when an upper estimate (the
     * parts' counts plus a slack per part, on top of the last exact count) reaches the budget.
     */
    const budgetReached = (): boolean => {
      const scanBound = scanTokens ?? scanApprox + TOKEN_SLACK_BASE + TOKEN_SLACK_PER_PART * scanParts;
      const sinceExact = approxTokens - exact.approx;
      const contentBound = exact.tokens + sinceExact + TOKEN_SLACK_PER_PART * (parts - exact.parts);
      if (scanBound + contentBound + TOKEN_SLACK_BASE < budget) return false;
      if (recountedChars <= RECOUNT_CHARS_FACTOR * countedChars + RECOUNT_BASE_CHARS) {
        if (scanTokens === null) {
          scanTokens = allActivatedText ? counter.count(allActivatedText) : 0;
          recountedChars += allActivatedText.length;
        }
        exact = { tokens: counter.count(newContent), approx: approxTokens, parts };
        recountedChars += newContent.length;
        return scanTokens + exact.tokens >= budget;
      }
      if (!warned.has('budget_estimated')) {
        warned.add('budget_estimated');
        warnings.push({
          code: 'lorebook_budget_estimated',
          message:
            'the lorebook budget was checked exactly too often in this scan; later entries were measured by their own token counts',
        });
      }
      return (scanTokens ?? scanApprox) + exact.tokens + sinceExact >= budget;
    };

    for (const e of survivors) {
      if (overflowed && !e.view.ignoreBudget) continue;
      const v = e.view;
      if (v.useProbability && v.probability !== 100 && !timed.isActive('sticky', v)) {
        const roll = random() * 100;
        if (!(roll <= v.probability)) {
          failedProbability.add(e);
          continue;
        }
      }
      if (hasMacro(e.content)) e.content = String(substitute(e.content) ?? '');
      const part = `${e.content}\n`;
      newContent += part;
      const partCount = countContent(part);
      partTokens.set(e, partCount);
      approxTokens += partCount;
      countedChars += part.length;
      parts++;
      if (!v.ignoreBudget && budgetReached()) {
        overflowed = true;
        continue;
      }
      activated.set(entryKey(e), e);
      activatedSet.add(e);
      activatedPass.set(e, { pass: state, level: state === 'recursion' ? recursionLevel : 0 });
    }

    const successful = survivors.filter((e) => !failedProbability.has(e));
    const forRecursion = successful.filter((e) => !e.view.preventRecursion);
    if (settings.recursive && !overflowed && forRecursion.length > 0) nextState = 'recursion';
    if (settings.recursive && !overflowed && isMinPass && buffer.hasRecurse()) nextState = 'recursion';
    const minNotSatisfied = settings.minActivations > 0 && activated.size < settings.minActivations;
    if (!nextState && !overflowed && minNotSatisfied) {
      const overMax =
        (settings.minActivationsDepthMax > 0 && buffer.getDepth() > settings.minActivationsDepthMax) ||
        buffer.getDepth() > messageCount;
      if (!overMax) {
        nextState = 'min_activations';
        buffer.advanceScan();
      }
    }
    if (!nextState && delayLevels.length > 0) {
      nextState = 'recursion';
      currentDelayLevel = delayLevels.shift()!;
    }
    scanState = nextState;
    if (scanState) {
      const text = forRecursion.map((e) => e.content).join('\n');
      buffer.addRecurse(text);
      allActivatedText = `${text}\n${allActivatedText}`;
      // Only read while not overflowed, when every entry of forRecursion went through the budget step.
      for (const e of forRecursion) scanApprox += partTokens.get(e) ?? 0;
      scanParts += forRecursion.length + 1;
    }
  }

  if (meter.exhausted)
    warnings.push({
      code: 'lorebook_scan_budget_exhausted',
      message: `the lorebook scan reached its work limit (${meter.limit} units: keys x scanned characters, entries x passes); the keys tested and passes after that did not run`,
    });
  const activatedList = [...activated.values()];
  timed.setEffects(activatedList.map((e) => e.view));

  const out: ActivatedLorebookEntry[] = activatedList.map((e) => {
    const v = e.view;
    const where = activatedPass.get(e)!;
    return {
      bookId: v.bookId,
      bookName: v.bookName,
      source: v.source,
      uid: v.uid,
      comment: v.comment,
      content: e.content,
      order: v.order,
      position: v.position,
      depth: v.depth,
      role: lorebookRole(v.role),
      outletName: v.outletName,
      ignoreBudget: v.ignoreBudget,
      mode: e.mode ?? 'key',
      pass: where.pass,
      recursionLevel: where.level,
    };
  });
  const placement = placeLorebookEntries(out, undefined, warnings);
  const activatedEntryUids: Record<string, number[]> = {};
  for (const a of out) (activatedEntryUids[a.bookId] ??= []).push(a.uid);

  return {
    activated: out,
    placement,
    activatedEntryUids,
    hits: out.map((a) => ({
      worldbook_id: a.bookId,
      worldbook_name: a.bookName,
      uid: a.uid,
      comment: a.comment,
      order: a.order,
      position: a.position,
      mode: a.mode,
      recursion_level: a.recursionLevel,
    })),
    matches: debug ? activatedList.map((e, i) => matchItem(out[i], e.firstMatch ?? null)) : null,
    triggerFilteredEntries: triggerFiltered,
    timedState,
    budget: { limit: budget, overflowed },
    passes,
    settings,
    warnings,
  };

  /** §d.4.12: the four selective logics. */
  function secondaryPasses(e: RunEntry, text: ScanText, options: KeyMatchOptions): boolean {
    const logic = e.view.selectiveLogic;
    let anyMatch = false;
    let allMatch = true;
    for (const key of secondaryKeys(e)) {
      const hit = matches(e, key, text, options);
      if (hit) anyMatch = true;
      else allMatch = false;
      if (logic === 0 && hit) return true;
      if (logic === 1 && !hit) return true;
    }
    if (logic === 2 && !anyMatch) return true;
    if (logic === 3 && allMatch) return true;
    return false;
  }

  /** ST `getScore` (§d.5.2): matching primary keys, plus secondary ones for AND_ANY / AND_ALL (all found). */
  function score(e: RunEntry, text: ScanText): number {
    const options = optionsFor(e);
    const primary = primaryKeys(e);
    if (primary.length === 0) return 0;
    const p = primary.filter((k) => matches(e, k, text, options)).length;
    const secondary = secondaryKeys(e);
    const s = secondary.filter((k) => matches(e, k, text, options)).length;
    if (secondary.length > 0) {
      if (e.view.selectiveLogic === 0) return p + s;
      if (e.view.selectiveLogic === 3) return s === secondary.length ? p + s : p;
    }
    return p;
  }
}

/**
 * Token counts of entry contents (`content + "\n"`), remembered per counter: the same text always counts the
 * same, and an entry's content without macros is the same every turn. Bounded; cleared when full.
 */
const CONTENT_COUNT_LIMIT = 50_000;
const contentCounts = new WeakMap<TokenCounter, Map<string, number>>();

function contentCounter(counter: TokenCounter): (text: string) => number {
  let cache = contentCounts.get(counter);
  if (!cache) {
    cache = new Map();
    contentCounts.set(counter, cache);
  }
  const map = cache;
  return (text) => {
    let n = map.get(text);
    if (n === undefined) {
      if (map.size >= CONTENT_COUNT_LIMIT) map.clear();
      n = counter.count(text);
      map.set(text, n);
    }
    return n;
  };
}
