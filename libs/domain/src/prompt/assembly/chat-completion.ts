import { parseExampleBlock, splitExampleBlocks, type ExampleMessage } from './examples';
import { insertDepthInjections, type DepthInjection } from './in-chat-injections';
import {
  defaultPrompt,
  readPreset,
  type PresetPrompt,
  type PromptRole,
  type ReadPreset,
} from './preset-prompts';

/**
 * SillyTavern 1.18's chat-completion assembly (external-formats.md §e.3, §e.4; ST `prepareOpenAIMessages`,
 * `preparePromptsForChatCompletion`, `populateChatCompletion`, `populateChatHistory`,
 * `populateDialogueExamples`), as a pure function. Macro expansion and token counting are given by the
 * caller; nothing here throws on bad input.
 */

export type GenerationType = 'normal' | 'continue' | 'impersonate' | 'swipe' | 'regenerate' | 'quiet';

export interface AssemblyMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

export interface ChatHistoryEntry {
  role: 'user' | 'assistant';
  /** The message text as stored (macros unexpanded, `\r` allowed). */
  content: string;
  /** The speaker's display name (persona name or character name). */
  name: string;
  /** Narrator messages are sent as `system` and never get a name prefix. */
  is_narrator?: boolean;
  /** Stored token count of `content` (counted with the same encoding); counted here when absent. */
  token_count?: number;
  /** A caller id carried into the trace (message id). */
  ref?: string;
  /** The floor the message belongs to (anchors `before_floor`/`after_floor` injections). */
  floor_no?: number;
  /** The user's input of this turn (anchors `before/after_current_user_input`). */
  is_current_input?: boolean;
}

/**
 * An extension prompt "in prompt" (author's note / summary / memory), placed by ST's `injectToMain`:
 * `start` before `main`, `end` after it.
 */
export interface InPromptExtension {
  identifier: string;
  content: string;
  role: PromptRole;
  position: 'start' | 'end';
  /**
   * Set when the text still takes its macro pass (ST `preparePromptsForChatCompletion` runs `preparePrompt`
   * over it right after the markers; no trim); the value labels the pass in the macro trace.
   */
  expand_as?: string;
}

export interface MacroHook {
  /** Expands macros in one text. `original` feeds `{{original}}` for card overrides. */
  (text: string, options?: { original?: string; where?: string }): string;
}

export interface TokenHook {
  count(text: string): number;
}

export interface ChatCompletionInput {
  preset: unknown;
  /** A character-specific `prompt_order` list to prefer (ST's global strategy uses 100001). */
  prompt_order_character_id?: number | string | null;
  generation_type?: GenerationType;
  user_name: string;
  char_name: string;
  card: {
    description?: string;
    personality?: string;
    scenario?: string;
    mes_example?: string;
    system_prompt?: string;
    post_history_instructions?: string;
  };
  /** Persona description; sent through the `personaDescription` marker when `persona_in_prompt`. */
  persona_description?: string;
  persona_in_prompt?: boolean;
  /** Lorebook text for the two markers (entries already joined, macros expanded). */
  world_info_before?: string;
  world_info_after?: string;
  /**
   * Lorebook entries at positions 5/6 (before/after example dialogue), in ST's `EMEntries` order (ascending
   * `order`); each may hold several `<START>` blocks.
   */
  world_info_examples_before?: string[];
  world_info_examples_after?: string[];
  /** The history, oldest first, hidden messages already removed. */
  history: ChatHistoryEntry[];
  /**
   * Extension prompts at a depth (lorebook @depth, author's note, character depth prompt, persona at depth,
   * injections). Those marked `expand_as` take their macro pass here, as ST `getExtensionPrompt` does.
   */
  depth_injections?: DepthInjection[];
  in_prompt_extensions?: InPromptExtension[];
  /** For `quiet` generations: the instruction sent last. */
  quiet_prompt?: string;
  /** Claude-style sources accept an assistant prefill; others ignore it (§j). */
  supports_assistant_prefill?: boolean;
  /** Pin examples: examples get the budget before history (ST `pin_examples`). */
  pin_examples?: boolean;
  /** Overrides of the preset's budget. */
  max_context_tokens?: number;
  max_output_tokens?: number;
  substitute: MacroHook;
  tokens: TokenHook;
}

export interface ChatCompletionTrace {
  selected_prompt_order_character_id: number | string | null;
  ignored_prompt_order_character_ids: Array<number | string>;
  unresolved_preset_markers: string[];
  unsupported_preset_fields: string[];
  ignored_preset_fields: string[];
  preset_warnings: Array<{ code: string; message: string; field?: string }>;
  /** Prompts of the order left out by their `injection_trigger` for this generation type. */
  trigger_filtered_entry_ids: string[];
  /** Absolute prompts and extension prompts that reached the history. */
  in_chat_inserted_entry_ids: string[];
  names_behavior_applied: number;
  continue_nudge_applied: boolean;
  continue_nudge_text: string | null;
  assistant_prefill_applied: boolean;
  assistant_prefill_strategy: 'prefill_message' | 'continue_prefill' | null;
  card_overrides: { main: boolean; jailbreak: boolean };
  budget: {
    max_context_tokens: number;
    max_output_tokens: number;
    available: number;
    used: number;
    mandatory_exceeded: boolean;
  };
  history: { total: number; included: number; dropped_oldest: number };
  examples: { blocks_total: number; blocks_included: number };
  /**
   * Extension prompts "in prompt" with text, and where they went: `main` (main's slot), `main_injection`
   * (beside an absolute main, in the history) or null (no main prompt: dropped, as ST does).
   */
  in_prompt_extensions: Array<{
    identifier: string;
    position: 'start' | 'end';
    placed_as: 'main' | 'main_injection' | null;
  }>;
}

export interface ChatCompletionResult {
  messages: AssemblyMessage[];
  /** The same messages before squashing, with their anchors (for injections and the policy). */
  annotated: AnnotatedMessage[];
  token_estimate: number;
  trace: ChatCompletionTrace;
}

interface Msg extends AssemblyMessage {
  identifier: string;
  tokens: number;
  slot?: string;
  floor_no?: number;
  current_input?: boolean;
  injected?: boolean;
}

/**
 * An assembled message with where it came from: its prompt-order slot (`main`, `charDescription`,
 * `chatHistory`, `dialogueExamples`, `jailbreak`, …, or `continue`, `control`, `prefill`), its own
 * identifier (`newMainChat`, `newChat`, `chatHistory`, `injection`, …) and, for history, its floor.
 */
export interface AnnotatedMessage extends AssemblyMessage {
  identifier: string;
  slot: string;
  tokens: number;
  floor_no?: number;
  current_input?: boolean;
  injected?: boolean;
}

/** Token cost of one chat message: content, role and a fixed per-message overhead (OpenAI's counting). */
function messageTokens(
  tokens: TokenHook,
  role: string,
  content: string,
  name?: string,
  known?: number,
): number {
  if (content.length === 0) return 0;
  const contentTokens = known ?? tokens.count(content);
  return contentTokens + 3 + roleTokens(tokens, role) + (name ? tokens.count(name) + 1 : 0);
}

/** Role names cost the same every time: counted once per counter. */
const roleTokenCache = new WeakMap<TokenHook, Map<string, number>>();
function roleTokens(tokens: TokenHook, role: string): number {
  let cache = roleTokenCache.get(tokens);
  if (!cache) roleTokenCache.set(tokens, (cache = new Map()));
  let n = cache.get(role);
  if (n === undefined) cache.set(role, (n = tokens.count(role)));
  return n;
}

/**
 * Whether a text may hold a macro: `{{…}}` or one of the legacy angle tags (`<USER>`, `<BOT>`, `<CHAR>`,
 * `<GROUP>`, `<CHARIFNOTGROUP>`), which ST's macro engines replace even in text without curly braces
 * (ST 1.18 `evaluateMacros` pre-env macros, `MacroEngine` pre-processors).
 */
export function mayHoldMacros(text: string): boolean {
  return text.includes('{{') || LEGACY_MACRO_TAG.test(text);
}
const LEGACY_MACRO_TAG = /<(?:USER|BOT|CHAR|GROUP|CHARIFNOTGROUP)>/i;

/** ST's `stringFormat`: `{0}` in the format is the value. */
function stringFormat(format: string, value: string): string {
  return format.replace(/{(\d+)}/g, (match, index: string) => (index === '0' ? value : match));
}

function formatWorldInfo(value: string, format: string): string {
  if (!value) return '';
  if (!format.trim()) return value;
  return stringFormat(format, value);
}

function sanitizeName(name: string): string {
  return /^[a-zA-Z0-9_]{1,64}$/.test(name) ? name : name.replace(/[^a-zA-Z0-9_]/g, '_').substring(0, 64);
}

/** A budget as ST's ChatCompletion keeps it: context − response, minus what is placed or reserved. */
class Budget {
  remaining: number;
  mandatoryExceeded = false;
  constructor(readonly total: number) {
    this.remaining = total;
  }
  canAfford(n: number): boolean {
    return this.remaining - n >= 0;
  }
  take(n: number): void {
    this.remaining -= n;
  }
  /** Mandatory prompts are placed even when they do not fit; the overflow is reported. */
  takeMandatory(n: number): void {
    if (!this.canAfford(n)) this.mandatoryExceeded = true;
    this.remaining -= n;
  }
  free(n: number): void {
    this.remaining += n;
  }
}

export function assembleChatCompletion(input: ChatCompletionInput): ChatCompletionResult {
  const type: GenerationType = input.generation_type ?? 'normal';
  const preset: ReadPreset = readPreset(input.preset, input.prompt_order_character_id);
  const settings = preset.settings;
  const sub = input.substitute;
  const maxContext = input.max_context_tokens ?? settings.openai_max_context;
  const maxOutput = input.max_output_tokens ?? settings.openai_max_tokens;
  const budget = new Budget(maxContext - maxOutput);
  const make = (
    role: PromptRole,
    content: string,
    identifier: string,
    name?: string,
    known?: number,
  ): Msg => ({
    role,
    content,
    identifier,
    ...(name ? { name } : {}),
    tokens: messageTokens(input.tokens, role, content, name, known),
  });

  // 1. The prompt collection: the order's enabled prompts allowed for this generation type (a disabled
  //    `main` stays as an empty anchor), macros expanded.
  const triggerFiltered: string[] = [];
  const collection: PresetPrompt[] = [];
  for (const entry of preset.order) {
    const prompt = preset.prompts.get(entry.identifier);
    if (!prompt) continue;
    const triggered = prompt.injection_trigger.length === 0 || prompt.injection_trigger.includes(type);
    if (entry.enabled && !triggered) triggerFiltered.push(prompt.identifier);
    if (entry.enabled && triggered) {
      collection.push({
        ...prompt,
        content: prompt.marker ? '' : sub(prompt.content, { where: prompt.identifier }),
      });
    } else if (entry.identifier === 'main') {
      collection.push({ ...prompt, content: '' });
    }
  }
  const indexOf = (identifier: string) => collection.findIndex((p) => p.identifier === identifier);
  const get = (identifier: string) => collection.find((p) => p.identifier === identifier);

  // 2. Runtime content of the markers (ST `preparePromptsForChatCompletion`), taking role and injection
  //    settings from the preset's prompt of the same identifier.
  const card = input.card;
  const scenarioText =
    card.scenario && settings.scenario_format
      ? sub(settings.scenario_format, { where: 'scenario_format' })
      : (card.scenario ?? '');
  const personalityText =
    card.personality && settings.personality_format
      ? sub(settings.personality_format, { where: 'personality_format' })
      : (card.personality ?? '');
  const markerContent: Record<string, string> = {
    worldInfoBefore: formatWorldInfo(input.world_info_before ?? '', settings.wi_format),
    worldInfoAfter: formatWorldInfo(input.world_info_after ?? '', settings.wi_format),
    charDescription: card.description ?? '',
    charPersonality: personalityText,
    scenario: scenarioText,
  };
  if (input.persona_in_prompt && input.persona_description) {
    markerContent.personaDescription = input.persona_description;
  }
  // A marker the collection lacks although the order does not disable it (absent from the order, or left
  // out by its injection_trigger) is appended to the collection by ST (`prompts.add(newPrompt)`) and then
  // placed like any relative prompt: after everything else, as system, in ST's `systemPrompts` order.
  for (const identifier of Object.keys(markerContent)) {
    if (get(identifier)) continue;
    const entry = preset.order.find((e) => e.identifier === identifier);
    if (entry && !entry.enabled) continue;
    collection.push(defaultPrompt(identifier, identifier, true));
  }
  // ST runs `preparePrompt` (a macro pass) over every marker's text too: macros in wi_format and any the
  // first pass over a card field produced are expanded here.
  for (const [identifier, content] of Object.entries(markerContent)) {
    const slot = get(identifier);
    if (slot) slot.content = content && sub(content, { where: identifier });
  }
  // Then it prepares the extension prompts "in prompt" (summary, author's note) the same way: one pass.
  const inPromptExtensions = (input.in_prompt_extensions ?? []).map((ext) =>
    ext.expand_as && ext.content ? { ...ext, content: sub(ext.content, { where: ext.expand_as }) } : ext,
  );

  // 3. Card overrides of main and jailbreak (unless forbidden or disabled).
  const overrides = { main: false, jailbreak: false };
  const mainEntry = preset.order.find((e) => e.identifier === 'main');
  const main = get('main');
  if (card.system_prompt && main && !main.forbid_overrides && mainEntry?.enabled !== false) {
    const original = main.content;
    main.content = sub(card.system_prompt, { original, where: 'card.system_prompt' });
    overrides.main = true;
  }
  const jbEntry = preset.order.find((e) => e.identifier === 'jailbreak');
  const jailbreak = get('jailbreak');
  if (
    card.post_history_instructions &&
    jailbreak &&
    !jailbreak.forbid_overrides &&
    jbEntry?.enabled !== false
  ) {
    const original = jailbreak.content;
    jailbreak.content = sub(card.post_history_instructions, {
      original,
      where: 'card.post_history_instructions',
    });
    overrides.jailbreak = true;
  }

  // 4. Relative prompts in their slots; absolute ones go to the history.
  budget.take(3); // every reply is primed with the assistant header
  const slots: Array<Msg[] | undefined> = [];
  const place = (identifier: string, messages: Msg[]) => {
    const index = indexOf(identifier);
    const total = messages.reduce((n, m) => n + m.tokens, 0);
    budget.takeMandatory(total);
    if (index >= 0) slots[index] = messages;
    else slots.push(messages);
  };
  const relative = (p: PresetPrompt) => p.injection_position !== 1;
  const ordered = [
    'worldInfoBefore',
    'main',
    'worldInfoAfter',
    'charDescription',
    'charPersonality',
    'scenario',
    'personaDescription',
  ];
  for (const identifier of ordered) {
    const p = get(identifier);
    if (!p || !relative(p)) continue;
    place(identifier, p.content ? [make(p.role, p.content, identifier)] : []);
  }

  // Control prompts go last; their budget is reserved first.
  const controls: Msg[] = [];
  if (type === 'impersonate' && settings.impersonation_prompt) {
    controls.push(
      make('system', sub(settings.impersonation_prompt, { where: 'impersonation_prompt' }), 'impersonate'),
    );
  }
  if (type === 'quiet' && input.quiet_prompt) {
    controls.push(make('system', sub(input.quiet_prompt, { where: 'quiet_prompt' }), 'quietPrompt'));
  }
  const controlTokens = controls.reduce((n, m) => n + m.tokens, 0);
  // Always placed, so an overflow is reported like a mandatory prompt's.
  budget.takeMandatory(controlTokens);

  // nsfw, jailbreak and every user-made relative prompt in their slots; then enhanceDefinitions.
  const userRelative = collection.filter((p) => !p.system_prompt && relative(p)).map((p) => p.identifier);
  for (const identifier of ['nsfw', 'jailbreak', ...userRelative, 'enhanceDefinitions']) {
    const p = get(identifier);
    if (!p || !relative(p) || slots[indexOf(identifier)]) continue;
    place(identifier, p.content ? [make(p.role, p.content, identifier)] : []);
  }

  // 5. Extension prompts "in prompt" (ST `populateChatCompletion` `injectToMain`, called for the known
  //    prompts in ST's order: summary (Hearth's memory) before the author's note). With a relative `main`
  //    they go into main's slot: `start` in front (each one before the previous ones), `end` after. With an
  //    absolute `main` (not in the chat completion) ST turns them into injections beside main in its
  //    absolute list, taking main's role, depth and order (`start` just before main, `end` just after it,
  //    so each `end` one lands before the previous ones). Without `main` they are dropped.
  const mainPrompt = get('main');
  const inPromptTrace: ChatCompletionTrace['in_prompt_extensions'] = [];
  const besideAbsoluteMain: InPromptExtension[] = [];
  for (const ext of inPromptExtensions) {
    if (!ext.content) continue;
    let placedAs: 'main' | 'main_injection' | null = null;
    if (mainPrompt && relative(mainPrompt)) {
      const message = make(ext.role, ext.content, ext.identifier);
      budget.takeMandatory(message.tokens);
      const slot = (slots[indexOf('main')] ??= []);
      if (ext.position === 'start') slot.unshift(message);
      else slot.push(message);
      placedAs = 'main';
    } else if (mainPrompt) {
      besideAbsoluteMain.push(ext);
      placedAs = 'main_injection';
    }
    inPromptTrace.push({ identifier: ext.identifier, position: ext.position, placed_as: placedAs });
  }

  // 6. History with in-chat injections.
  const names = settings.names_behavior;
  // ST `setOpenAIMessages` (1.18 has no `wrap_in_quotes` any more: an old preset's flag is ignored), then
  // `preparePrompt` expands macros when the message is placed (`raw` keeps the text before that).
  const prepared = input.history.map((entry, index) => {
    let role: 'system' | 'user' | 'assistant' = entry.is_narrator ? 'system' : entry.role;
    let content = entry.content;
    let known = entry.token_count;
    if (names === 2 && !entry.is_narrator) {
      content = `${entry.name}: ${content}`;
      known = undefined;
    }
    if (content.includes('\r')) {
      content = content.replace(/\r/g, '');
      known = undefined;
    }
    const raw = content;
    if (mayHoldMacros(content)) {
      content = sub(content, { where: `chatHistory-${index}` });
      known = undefined;
    }
    const name = names === 1 && entry.name ? sanitizeName(entry.name) : undefined;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') role = 'system';
    return {
      role,
      content,
      raw,
      name,
      speaker: entry.name,
      stored: entry.content,
      known,
      ref: entry.ref,
      floor_no: entry.floor_no,
      current: entry.is_current_input,
    };
  });

  // Continue with `continue_prefill` (ST `populateChatCompletion`): the newest message is taken out before
  // the in-chat injections are placed (so depths count without it) and sent last, as it was stored (no
  // macro pass), after the assistant prefill on Claude-style sources; named only for names_behavior 1.
  let continuePrefill: Msg | null = null;
  if (type === 'continue' && settings.continue_prefill && prepared.length > 0) {
    const last = prepared.pop()!;
    const prefill =
      last.role === 'assistant' && input.supports_assistant_prefill && settings.assistant_prefill
        ? sub(settings.assistant_prefill, { where: 'assistant_prefill' })
        : '';
    const name = names === 1 && last.speaker ? sanitizeName(last.speaker) : undefined;
    continuePrefill = {
      ...make(last.role, [prefill, last.raw].filter((x) => x).join('\n\n'), 'continuePrefill', name),
      ...(last.floor_no !== undefined ? { floor_no: last.floor_no } : {}),
    };
    budget.takeMandatory(continuePrefill.tokens);
  }

  const absoluteList: DepthInjection[] = collection
    .filter((p) => p.injection_position === 1)
    .map((p) => ({
      content: p.content,
      depth: p.injection_depth,
      role: p.role,
      order: p.injection_order,
      kind: 'preset' as const,
      key: p.identifier,
      source_id: p.identifier,
    }));
  for (const ext of besideAbsoluteMain) {
    const at = absoluteList.findIndex((p) => p.key === 'main');
    if (at < 0) continue;
    const copy = {
      ...absoluteList[at],
      content: ext.content,
      key: ext.identifier,
      source_id: ext.identifier,
    };
    absoluteList.splice(ext.position === 'end' ? at + 1 : at, 0, copy);
  }
  const absolutes = absoluteList.filter((p) => p.content);
  // ST `getExtensionPrompt`'s macro pass over the extension prompts that still need it.
  const expandExtension = (text: string, label: string) =>
    mayHoldMacros(text) ? sub(text, { where: label }) : text;
  const withInjections = insertDepthInjections(
    prepared,
    [...absolutes, ...(input.depth_injections ?? [])],
    expandExtension,
  );
  const inChatInserted = withInjections.flatMap((m) => (m.injected ? m.source_ids : []));

  // Dialogue examples (card examples, with lorebook example blocks before/after).
  // ST `Generate` walks its EM entries (ascending order) and `unshift`s each "before" entry's blocks in
  // front of the card's, so the "before" entries end up in reverse; "after" entries are pushed.
  const exampleBlocks = [
    ...[...(input.world_info_examples_before ?? [])].reverse().flatMap((text) => splitExampleBlocks(text)),
    ...splitExampleBlocks(card.mes_example ?? ''),
    ...(input.world_info_examples_after ?? []).flatMap((text) => splitExampleBlocks(text)),
  ];
  const parsedExamples: ExampleMessage[][] = exampleBlocks.map((block) =>
    parseExampleBlock(block, input.user_name, input.char_name),
  );

  let continueNudgeText: string | null = null;
  let historyIncluded = 0;
  let examplesIncluded = 0;
  let prefillStrategy: ChatCompletionTrace['assistant_prefill_strategy'] = null;
  let continueTail: Msg[] = [];

  const populateExamples = () => {
    if (indexOf('dialogueExamples') < 0) return;
    const slot: Msg[] = [];
    slots[indexOf('dialogueExamples')] = slot;
    if (parsedExamples.length === 0) return;
    const separator = make(
      'system',
      sub(settings.new_example_chat_prompt, { where: 'new_example_chat_prompt' }),
      'newChat',
    );
    for (const dialogue of parsedExamples) {
      const messages = dialogue.map((m, i) => make('system', m.content, `dialogueExamples-${i}`, m.name));
      const cost = separator.tokens + messages.reduce((n, m) => n + m.tokens, 0);
      if (!budget.canAfford(cost)) break;
      budget.take(cost);
      if (separator.content) slot.push({ ...separator });
      slot.push(...messages.filter((m) => m.content));
      examplesIncluded++;
    }
  };

  const populateHistory = () => {
    if (indexOf('chatHistory') < 0) return;
    const slot: Msg[] = [];
    slots[indexOf('chatHistory')] = slot;
    const newChat = make(
      'system',
      sub(settings.new_chat_prompt, { where: 'new_chat_prompt' }),
      'newMainChat',
    );
    // Reserved as ST's reserveBudget does, and always placed: an overflow is reported as mandatory.
    budget.takeMandatory(newChat.tokens);

    const pool = withInjections.map((m): { message: Msg; injected: boolean } =>
      m.injected
        ? { message: { ...make(m.role, m.content, 'injection'), injected: true }, injected: true }
        : {
            message: {
              ...make(m.item.role, m.item.content, 'chatHistory', m.item.name, m.item.known),
              floor_no: m.item.floor_no,
              current_input: m.item.current,
            },
            injected: false,
          },
    );

    // Continue without `continue_prefill` (ST `populateChatHistory`): the last non-injected message moves
    // behind the continue nudge, without a name (ST builds it with `Message.fromPromptAsync`, which drops
    // it). `{{lastChatMessage}}` is ST's `cyclePrompt`: for chat completion ST script.js `Generate` fills
    // `chat2` with the bare `mes` of each message (no `Name: ` prefix, that is text completion's
    // `formatMessageHistoryItem`), takes the newest with `chat2.shift()`, appends `continue_postfix` unless it
    // ends with a space, and the nudge uses it trimmed. A nudge is made whenever that text is not empty
    // (so also with no history: `chat2` is then `['']`, plus the postfix).
    if (type === 'continue' && !settings.continue_prefill) {
      const lastReal = pool.map((p) => p.injected).lastIndexOf(false);
      const source = lastReal >= 0 ? withInjections[lastReal] : undefined; // the pool maps withInjections 1:1
      const stored = source && !source.injected ? source.item.stored : '';
      const cyclePrompt = stored.endsWith(' ') ? stored : stored + settings.continue_postfix;
      if (cyclePrompt) {
        const cycle = cyclePrompt.trim();
        // ST substitutes `{{lastChatMessage}}` with the other macros, then `preparePrompt` runs macros
        // again (over the inserted text too): one pass over the filled-in text is the same.
        continueNudgeText = sub(
          settings.continue_nudge_prompt.replace(/{{lastChatMessage}}/gi, () => cycle),
          { where: 'continue_nudge_prompt' },
        );
        continueTail = [];
        if (lastReal >= 0) {
          const [last] = pool.splice(lastReal, 1);
          const { name: _dropped, ...unnamed } = last.message;
          continueTail.push({
            ...unnamed,
            tokens: messageTokens(input.tokens, unnamed.role, unnamed.content),
          });
        }
        continueTail.push(make('system', continueNudgeText, 'continueNudge'));
        budget.takeMandatory(continueTail.reduce((n, m) => n + m.tokens, 0));
      }
    }

    const lastPrompt = pool[pool.length - 1];
    if (lastPrompt && lastPrompt.message.role === 'assistant' && settings.send_if_empty) {
      const filler = make('user', settings.send_if_empty, 'emptyUserMessageReplacement');
      if (budget.canAfford(filler.tokens)) {
        budget.take(filler.tokens);
        slot.push(filler);
      }
    }

    for (let i = pool.length - 1; i >= 0; i--) {
      const entry = pool[i];
      if (!budget.canAfford(entry.message.tokens)) break;
      budget.take(entry.message.tokens);
      if (entry.message.content) slot.unshift(entry.message);
      if (!entry.injected) historyIncluded++;
    }
    budget.free(newChat.tokens);
    budget.take(newChat.tokens);
    if (newChat.content) slot.unshift(newChat);
  };

  if (input.pin_examples) {
    populateExamples();
    populateHistory();
  } else {
    populateHistory();
    populateExamples();
  }

  if (continuePrefill) {
    continueTail = [continuePrefill];
    prefillStrategy = 'continue_prefill';
    historyIncluded++;
  }

  // Final order: slots by prompt order, then the continue tail, then control prompts.
  const flat: Msg[] = [];
  slots.forEach((slot, index) => {
    for (const m of slot ?? []) flat.push({ ...m, slot: collection[index]?.identifier ?? m.identifier });
  });
  flat.push(...continueTail.map((m) => ({ ...m, slot: 'continue' })));
  flat.push(...controls.map((m) => ({ ...m, slot: 'control' })));

  // Assistant prefill (Claude-style sources only, §j): an assistant message at the end.
  // ST `createGenerationParameters`: no prefill on quiet generations nor when continuing with
  // continue_prefill; a continue with the nudge gets it like a normal generation.
  let prefillApplied = prefillStrategy === 'continue_prefill';
  if (!prefillApplied && input.supports_assistant_prefill && type !== 'quiet') {
    const text = type === 'impersonate' ? settings.assistant_impersonation : settings.assistant_prefill;
    if (text) {
      const content = sub(text, {
        where: type === 'impersonate' ? 'assistant_impersonation' : 'assistant_prefill',
      });
      if (content) {
        const message = make('assistant', content, 'assistantPrefill');
        budget.takeMandatory(message.tokens);
        flat.push({ ...message, slot: 'prefill' });
        prefillApplied = true;
        prefillStrategy = 'prefill_message';
      }
    }
  }

  const annotated: AnnotatedMessage[] = flat
    .filter((m) => m.content.length > 0)
    .map((m) => ({
      role: m.role,
      content: m.content,
      ...(m.name ? { name: m.name } : {}),
      identifier: m.identifier,
      slot: m.slot ?? m.identifier,
      tokens: m.tokens,
      ...(m.floor_no !== undefined ? { floor_no: m.floor_no } : {}),
      ...(m.current_input ? { current_input: true } : {}),
      ...(m.injected ? { injected: true } : {}),
    }));
  const result = settings.squash_system_messages ? squashSystemMessages(annotated, input.tokens) : annotated;

  const messages: AssemblyMessage[] = result.map((m) => ({
    role: m.role,
    content: m.content,
    ...(m.name ? { name: m.name } : {}),
  }));
  const used = result.reduce((n, m) => n + m.tokens, 0) + 3;
  return {
    messages,
    annotated,
    token_estimate: used,
    trace: {
      selected_prompt_order_character_id: preset.selected_prompt_order_character_id,
      ignored_prompt_order_character_ids: preset.ignored_prompt_order_character_ids,
      unresolved_preset_markers: preset.unresolved_preset_markers,
      unsupported_preset_fields: preset.unsupported_preset_fields,
      ignored_preset_fields: preset.ignored_preset_fields,
      preset_warnings: preset.warnings,
      trigger_filtered_entry_ids: triggerFiltered,
      in_chat_inserted_entry_ids: inChatInserted,
      names_behavior_applied: names,
      continue_nudge_applied: continueNudgeText !== null,
      continue_nudge_text: continueNudgeText,
      assistant_prefill_applied: prefillApplied,
      assistant_prefill_strategy: prefillStrategy,
      card_overrides: overrides,
      budget: {
        max_context_tokens: maxContext,
        max_output_tokens: maxOutput,
        available: budget.total,
        used,
        mandatory_exceeded: budget.mandatoryExceeded,
      },
      history: {
        total: input.history.length,
        included: historyIncluded,
        dropped_oldest: input.history.length - historyIncluded,
      },
      examples: { blocks_total: parsedExamples.length, blocks_included: examplesIncluded },
      in_prompt_extensions: inPromptTrace,
    },
  };
}

/** ST `squashSystemMessages`: consecutive unnamed system messages merge with `\n`, except separators. */
export function squashSystemMessages<T extends AssemblyMessage & { identifier: string; tokens: number }>(
  messages: T[],
  tokens: TokenHook,
): T[] {
  const exclude = new Set(['newMainChat', 'newChat', 'groupNudge']);
  const out: T[] = [];
  let last: T | null = null;
  const squashable = (m: T) => !exclude.has(m.identifier) && m.role === 'system' && !m.name;
  for (const message of messages) {
    if (message.role === 'system' && !message.content) continue;
    if (squashable(message) && last && squashable(last)) {
      last.content += `\n${message.content}`;
      last.tokens = messageTokens(tokens, last.role, last.content);
    } else {
      const copy = { ...message };
      out.push(copy);
      last = copy;
    }
  }
  return out;
}
