/**
 * State shared by both engines during one assembly: the context, the variable overlay, the seeded random
 * stream, warnings and used names. Also the value lookups both engines share (names, chat, time).
 */
import { JSON_MAX_DEPTH } from '../../text/json-depth';
import { forkRandom, type RandomSource } from '../shared/seeded-random';
import { getStringHash, parseDice, rollDice, seedrandom } from './st-compat';
import {
  formatMoment,
  humanizeDuration,
  isValidTimeZone,
  parseMomentInput,
  wallClockAtUtcOffset,
  wallClockInZone,
  type WallClock,
} from './time-format';
import type {
  MacroChatMessage,
  MacroContext,
  MacroEngineKind,
  MacroWarning,
  MacroWarningCode,
} from './types';
import { VariableOverlay } from './variables';

/** Caps that keep a hostile macro from allocating or looping without bound (never in ST; documented). */
export const MACRO_LIMITS = {
  /** `{{space::n}}` / `{{newline::n}}` repeat count. */
  maxRepeat: 10_000,
  /** Dice per `{{roll}}`. */
  maxDice: 1_000,
  /** Output length of one expansion, in characters. */
  maxOutputLength: 5_000_000,
  /** Length of one variable value a macro may write, in characters. */
  maxVariableLength: 1_000_000,
  /**
   * Characters one v2 expansion may parse in all, counting every nested re-read: this many times its
   * input, plus the floor. Past it, what is left is text (`macro_limit`).
   */
  parseBudgetFactor: 8,
  /**
   * Characters the variable writes of one prompt assembly may stage in all (each write's value before
   * and after): a write on a large value re-reads and re-writes all of it.
   */
  maxWrittenChars: 4_000_000,
  parseBudgetFloor: 65_536,
} as const;

export type CardField =
  | 'description'
  | 'personality'
  | 'scenario'
  | 'mesExamples'
  | 'systemPrompt'
  | 'postHistoryInstructions'
  | 'depthPrompt'
  | 'creatorNotes'
  | 'persona';

export class MacroRuntime {
  readonly overlay: VariableOverlay;
  readonly random: RandomSource;
  readonly warnings: MacroWarning[] = [];
  private readonly usedNames = new Set<string>();
  private readonly timezone: string;
  private clock: WallClock | null = null;
  source = '';

  constructor(readonly context: MacroContext) {
    this.overlay = new VariableOverlay(context.variables ?? {}, {
      maxValueLength: MACRO_LIMITS.maxVariableLength,
      maxWrittenChars: MACRO_LIMITS.maxWrittenChars,
      onLimit: (scope, name, reason) =>
        this.warn(
          'macro_limit',
          reason === 'value_length'
            ? `Write to ${scope} variable "${name}" exceeds ${MACRO_LIMITS.maxVariableLength} characters; not staged.`
            : reason === 'depth'
              ? `Write to ${scope} variable "${name}" would nest its value deeper than ${JSON_MAX_DEPTH} levels; not staged.`
              : `Variable writes of one prompt assembly exceed ${MACRO_LIMITS.maxWrittenChars} characters; later writes are not staged.`,
        ),
    });
    this.random = forkRandom(String(context.seed ?? ''), 'macros');
    const tz = context.timezone ?? 'UTC';
    if (isValidTimeZone(tz)) {
      this.timezone = tz;
    } else {
      this.timezone = 'UTC';
      this.warn('macro_invalid_timezone', `Unknown timezone "${tz}"; UTC is used.`);
    }
  }

  warn(code: MacroWarningCode, message: string, macro?: string): void {
    if (this.warnings.length >= 200) return;
    this.warnings.push({
      code,
      message,
      ...(macro ? { macro } : {}),
      ...(this.source ? { source: this.source } : {}),
    });
  }

  /** Names seen by the expansion in progress (reset by the session per text). */
  callNames = new Set<string>();

  use(name: string): void {
    const lower = name.toLowerCase();
    this.usedNames.add(lower);
    this.callNames.add(lower);
  }

  names(): string[] {
    return [...this.usedNames];
  }

  // ---- names (env-macros.js / substituteParamsLegacy) ----
  get user(): string {
    return this.context.user ?? 'User';
  }

  get char(): string {
    return this.context.char ?? this.context.character?.name ?? '';
  }

  get group(): string {
    const g = this.context.group;
    return g ? g.members.join(', ') : this.char;
  }

  get groupNotMuted(): string {
    const g = this.context.group;
    if (!g) return this.char;
    const muted = new Set(g.muted ?? []);
    return g.members.filter((m) => !muted.has(m)).join(', ');
  }

  /** `getNotCharValue` / MacroEnvBuilder(includeUser): the other members plus the user; the user when solo. */
  get notChar(): string {
    const g = this.context.group;
    if (!g) return this.user;
    return [...g.members.filter((m) => m !== this.char), this.user].join(', ');
  }

  // ---- card fields (getCharacterCardFields: each field trimmed, run through baseChatReplace) ----
  /** Expands a card field's own macros (set by the session); card-field macros are off meanwhile. */
  cardExpander: ((text: string) => string) | null = null;
  /** ST `replaceCharacterCard`: false while a card field itself is being expanded. */
  cardFieldsEnabled = true;
  private readonly cardCache = new Map<CardField, string>();

  /**
   * A card field as ST's macros see it: trimmed, macro-expanded once per assembly (baseChatReplace, with
   * card-field macros resolving to nothing inside), `\r` removed. Callers that already expanded the
   * fields set `character.fieldsExpanded`.
   */
  card(field: CardField): string {
    if (!this.cardFieldsEnabled) return '';
    const cached = this.cardCache.get(field);
    if (cached !== undefined) return cached;
    const raw = field === 'persona' ? this.context.persona : this.context.character?.[field];
    let value = typeof raw === 'string' ? raw.trim() : '';
    if (value && !this.context.character?.fieldsExpanded && this.cardExpander) {
      this.cardCache.set(field, '');
      const previous = this.cardFieldsEnabled;
      this.cardFieldsEnabled = false;
      try {
        value = this.cardExpander(value);
      } finally {
        this.cardFieldsEnabled = previous;
      }
    }
    value = value.replace(/\r/g, '');
    this.cardCache.set(field, value);
    return value;
  }

  /** `{{mesExamples}}` for chat completion: `parseMesExamples(raw, false)` blocks headed `<START>\n`. */
  get mesExamples(): string {
    if (!this.cardFieldsEnabled) return '';
    const c = this.context.character;
    if (c?.mesExamplesFormatted !== undefined) return c.mesExamplesFormatted;
    let raw = this.card('mesExamples');
    if (!raw || raw === '<START>') return '';
    if (!raw.startsWith('<START>')) raw = `<START>\n${raw.trim()}`;
    return raw
      .split(/<START>/gi)
      .slice(1)
      .map((block) => `<START>\n${block.trim()}\n`)
      .join('');
  }

  // ---- chat (chat-macros.js / macros.js getLastMessageId) ----
  private get chat(): MacroChatMessage[] {
    return Array.isArray(this.context.chat) ? this.context.chat : [];
  }

  lastMessageId(excludeSwipeInProgress = true, filter?: (m: MacroChatMessage) => boolean): number | null {
    const chat = this.chat;
    for (let i = chat.length - 1; i >= 0; i--) {
      const m = chat[i];
      if (!m) continue;
      if (
        excludeSwipeInProgress &&
        Array.isArray(m.swipes) &&
        typeof m.swipe_id === 'number' &&
        m.swipe_id >= m.swipes.length
      )
        continue;
      if (!filter || filter(m)) return i;
    }
    return null;
  }

  private messageText(id: number | null): string {
    if (id === null) return '';
    return String(this.chat[id]?.mes ?? '');
  }

  get lastMessage(): string {
    return this.messageText(this.lastMessageId());
  }

  get lastUserMessage(): string {
    return this.messageText(this.lastMessageId(true, (m) => !!m.is_user && !m.is_system));
  }

  get lastCharMessage(): string {
    return this.messageText(this.lastMessageId(true, (m) => !m.is_user && !m.is_system));
  }

  get lastSwipeId(): string {
    const id = this.lastMessageId(false);
    const swipes = id === null ? undefined : this.chat[id]?.swipes;
    return Array.isArray(swipes) ? String(swipes.length) : '';
  }

  get currentSwipeId(): string {
    const id = this.lastMessageId(false);
    const swipeId = id === null ? undefined : this.chat[id]?.swipe_id;
    return swipeId !== undefined && swipeId !== null ? String(swipeId + 1) : '';
  }

  get allChatRange(): string {
    return this.chat.length === 0 ? '' : `0-${this.chat.length - 1}`;
  }

  // ---- time (time-macros.js) ----
  now(): WallClock {
    if (!this.clock) this.clock = wallClockInZone(this.context.now, this.timezone);
    return this.clock;
  }

  format(format: string): string {
    return formatMoment(this.now(), format);
  }

  formatAtUtcOffset(offset: number, format: string): string {
    return formatMoment(wallClockAtUtcOffset(this.context.now, offset), format);
  }

  /** `getTimeSinceLastMessage`: the last user message before the latest reply; 'just now' if none. */
  idleDuration(): string {
    const chat = this.chat;
    let takeNext = false;
    for (let i = chat.length - 1; i >= 0; i--) {
      const m = chat[i];
      if (!m || m.is_system) continue;
      if (m.is_user && takeNext) {
        const sent = parseSendDate(m.send_date);
        if (sent === null) return 'just now';
        return humanizeDuration(this.context.now - sent);
      }
      takeNext = true;
    }
    return 'just now';
  }

  timeDiff(left: string, right: string, withSuffix: boolean): string {
    const a = parseMomentInput(left, this.timezone);
    const b = parseMomentInput(right, this.timezone);
    return humanizeDuration(a - b, withSuffix);
  }

  // ---- random ----
  /** `{{roll}}`: bare digits mean 1dN; an invalid formula gives '' (and a warning). */
  roll(formulaText: string, macro = 'roll'): string {
    let formula = formulaText.trim();
    if (/^\d+$/.test(formula)) formula = `1d${formula}`;
    const dice = parseDice(formula);
    if (!dice) {
      this.warn('macro_invalid_roll', `Invalid roll formula: ${formula}`, macro);
      return '';
    }
    if (dice.numDice > MACRO_LIMITS.maxDice) {
      this.warn('macro_limit', `Roll of ${dice.numDice} dice exceeds ${MACRO_LIMITS.maxDice}.`, macro);
      return '';
    }
    return String(rollDice(dice, this.random));
  }

  randomItem<T>(list: T[]): T {
    return list[Math.floor(this.random() * list.length)];
  }

  get chatIdHash(): number {
    if (typeof this.context.chatIdHash === 'number' && Number.isFinite(this.context.chatIdHash)) {
      return this.context.chatIdHash;
    }
    return getStringHash(this.context.chatId ?? String(this.context.seed ?? ''));
  }

  /**
   * `{{pick}}`: ST seeds seedrandom with `getStringHash(chatIdHash-contentHash-offset[-rerollSeed])`;
   * the classic engine passes the hash as a number (seedrandom appends `\0`), the new one as a string.
   */
  pickItem<T>(list: T[], contentHash: number, offset: number, engine: MacroEngineKind): T {
    const parts: (string | number)[] = [this.chatIdHash, contentHash, offset];
    if (
      engine === 'v2' &&
      this.context.pickRerollSeed !== undefined &&
      this.context.pickRerollSeed !== null
    ) {
      parts.push(this.context.pickRerollSeed);
    }
    const finalSeed = getStringHash(parts.join('-'));
    const rng = engine === 'v2' ? seedrandom(String(finalSeed)) : seedrandom(finalSeed);
    return list[Math.floor(rng() * list.length)];
  }

  outlet(key: string): string {
    const outlets = this.context.outlets ?? {};
    return Object.prototype.hasOwnProperty.call(outlets, key) ? String(outlets[key] ?? '') : '';
  }

  limit(kind: 'maxPrompt' | 'maxContext' | 'maxResponse'): string {
    const value = this.context.limits?.[kind];
    return value === undefined || value === null ? '' : String(value);
  }
}

function parseSendDate(value: number | string | null | undefined): number | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}
