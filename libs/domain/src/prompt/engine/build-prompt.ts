import { createHash } from 'node:crypto';
import {
  assembleChatCompletion,
  mayHoldMacros,
  squashSystemMessages,
  type AnnotatedMessage,
  type ChatHistoryEntry,
  type GenerationType,
  type InPromptExtension,
} from '../assembly/chat-completion';
import type { DepthInjection } from '../assembly/in-chat-injections';
import { parsePostProcessingMode, postProcessPrompt } from '../assembly/post-processing';
import { readPreset } from '../assembly/preset-prompts';
import {
  anchorInjections,
  LOREBOOK_PLACEMENTS,
  planInjections,
  summariseInjections,
  trimInjectionTrace,
  type PromptMode,
} from '../injections/injections';
import { activateLorebooks, emptyLorebookTimedState, type LorebookScanSourceKind } from '../lorebook';
import { MacroSession } from '../macros';
import { macroContextOf } from './macro-context';
import { isInjectionDepth } from './authors-note';
import {
  authorsNoteSchedule,
  mergeAuthorsNote,
  readAuthorsNote,
  resolvePersona,
  traceAuthorsNote,
  tracePersona,
  type AuthorsNotePart,
} from './authors-note-prompt';
import { applyStructure, resolvePolicy, selectHistory } from '../policy';
import { applyRegexScripts, REGEX_PLACEMENTS, type ScopedRegexScript } from '../regex';
import { encodingForModel, tokenCounter } from '../shared/token-counter';
import type { PromptEngineInput, PromptEngineResult, TrimReason } from './engine.types';

/**
 * The prompt engine (issue 4): one pure function from everything a turn knows to the messages to send and
 * the explanation of how they were made. Order of work, as SillyTavern 1.18 does it where it has an
 * equivalent (docs/decisions.md "Prompt engine"):
 *  1. policy layers resolved; budget from the policy, else the preset, else the system default;
 *  2. history selected (hidden messages, visibility ranges, window) and the user's input regexed as stored;
 *  3. one macro session for the whole turn (a `{{setvar}}` early is seen by a `{{getvar}}` later);
 *  4. the author's note scheduled by its interval and the persona's position resolved; lorebooks activated
 *     over the history and the new input (and the persona at depth), then placed (before/after, merged
 *     into the author's note with the persona, at depth, example blocks, outlets);
 *  5. injections planned; lorebook placements join the lorebook, the rest are anchored after assembly;
 *  6. ST's chat-completion assembly (preset order, markers, card overrides, in-chat injections, budget);
 *  7. squash (ST browser), then ST's prompt post-processing (`post_processing`: merge / semi / strict /
 *     single, ST server), then the policy's structure and delivery (Hearth's own layer, last);
 *  8. snapshot with a stable digest, the assembly report and the runtime trace.
 * Never throws on bad data: problems become warnings.
 */
export function buildPrompt(input: PromptEngineInput): PromptEngineResult {
  const intent: GenerationType = input.intent ?? 'normal';
  const mode: PromptMode = input.prompt_mode ?? 'compat_strict';
  const tokens = tokenCounter(input.token_encoding ?? encodingForModel(input.provider.model_id));
  const warnings: Array<{ code: string; message: string }> = [];

  // 1. Policy and budget.
  const policy = resolvePolicy(input.policy_layers ?? []);
  const preset = input.preset ? readPreset(input.preset.data) : null;
  const presetBudget =
    preset && isObject(input.preset?.data) ? (input.preset?.data as Record<string, unknown>) : null;
  let maxInput = policy.policy.budget.max_input_tokens;
  let reserved = policy.policy.budget.reserved_completion_tokens;
  let budgetSource: string = policy.sources['budget.max_input_tokens'];
  if (
    budgetSource === 'system_default' &&
    presetBudget &&
    typeof presetBudget.openai_max_context === 'number'
  ) {
    maxInput = preset!.settings.openai_max_context;
    budgetSource = 'preset';
  }
  if (
    policy.sources['budget.reserved_completion_tokens'] === 'system_default' &&
    presetBudget &&
    typeof presetBudget.openai_max_tokens === 'number'
  ) {
    reserved = preset!.settings.openai_max_tokens;
  }
  if (input.generation_params?.max_context_tokens) {
    maxInput = input.generation_params.max_context_tokens;
    budgetSource = 'generation_params';
  }
  if (input.generation_params?.max_output_tokens) reserved = input.generation_params.max_output_tokens;
  if (reserved >= maxInput) {
    warnings.push({
      code: 'budget_reserved_exceeds_input',
      message: 'reserved_completion_tokens leaves no room for the prompt',
    });
  }

  // 2. History selection.
  const selection = selectHistory(
    input.history.map((m) => ({ ...m, is_hidden: m.is_hidden === true })),
    policy.policy,
  );
  const kept = selection.history;

  // 3. One macro session for the turn.
  const card = (input.character?.data ?? {}) as Record<string, unknown>;
  const str = (value: unknown) => (typeof value === 'string' ? value : '');
  const charName = str(card.name) || 'Assistant';
  const userName = input.user.name || 'User';
  const extensions = isObject(card.extensions) ? (card.extensions as Record<string, unknown>) : {};
  const depthPrompt = isObject(extensions.depth_prompt)
    ? (extensions.depth_prompt as Record<string, unknown>)
    : null;
  const outlets: Record<string, string> = {};
  const macroContext = macroContextOf(input, { outlets, generationType: intent });
  // `{{input}}` is ST's input box (`$('#send_textarea').val()`). ST `Generate` empties the box before it
  // sends the text and assembles the prompt, except for regenerate, swipe, quiet and impersonate; only an
  // impersonation leaves the typed text there (Hearth has no unsent box text for the other types).
  macroContext.input = intent === 'impersonate' ? (input.user_input ?? '') : '';
  const session = new MacroSession(macroContext);
  const sub = (text: string, options?: { original?: string; where?: string }) =>
    mayHoldMacros(text)
      ? session.expand(text, { source: options?.where, original: options?.original })
      : text;
  const field = (text: string) => sub(text.trim(), { where: 'card' }).replace(/\r/g, '');

  // Regex scripts: the user's input as stored, then prompt-only scripts over the history.
  const scripts: ScopedRegexScript[] = (input.regex?.scripts ?? []).map((s) => ({
    script: s.script,
    scope: s.scope,
  }));
  const regexWarnings: Array<{ code: string; message: string; script_name: string }> = [];
  const preRules: Array<{ name: string; scope: string | null; matches: number }> = [];
  const runRegex = (text: string, placement: number, runMode: 'stored' | 'prompt', depth?: number) => {
    if (scripts.length === 0 || !text) return text;
    const result = applyRegexScripts(scripts, text, {
      placement,
      mode: runMode,
      depth,
      substitute: (t, escapeValue) => session.expand(t, { source: 'regex', escapeValue }),
    });
    for (const r of result.applied) preRules.push({ name: r.name, scope: r.scope, matches: r.matches });
    for (const w of result.warnings)
      regexWarnings.push({ code: w.code, message: w.message, script_name: w.script_name });
    return result.text;
  };
  // ST `sendMessageAsUser`: the input's USER_INPUT regexes, then `substituteParams` — the message is stored
  // (and scanned by the lorebook, and sent) with its macros already expanded.
  // ST `Generate`: a normal generation with an empty input sends `send_if_empty` (trimmed) as the user's
  // message when the preset sets one (`else if (textareaText == '' && … [undefined, 'normal'].includes(type)
  // && main_api == 'openai' && oai_settings.send_if_empty.trim().length > 0) sendMessageAsUser(
  // oai_settings.send_if_empty.trim(), …)`), so it is stored, regexed and expanded like typed text.
  const sendIfEmpty = preset?.settings.send_if_empty.trim() ?? '';
  const userInput =
    input.user_input === '' && intent === 'normal' && sendIfEmpty ? sendIfEmpty : input.user_input;
  const processedInput =
    userInput !== null && userInput !== undefined
      ? sub(runRegex(userInput, REGEX_PLACEMENTS.user_input, 'stored'), { where: 'user_input' })
      : null;

  // Regex depth as ST `Generate` counts it over `coreChat`: 0 is the newest message in the chat (the new
  // input when it joins the chat; quiet and impersonate text does not), and on continue the message being
  // continued is -1 (`coreChat.length - index - (isContinue ? 2 : 1)`).
  // An empty input sends no message (ST `Generate` only calls `sendMessageAsUser` for non-empty text; an
  // empty prompt then ends with the history, where `send_if_empty` may apply).
  const inputJoinsChat =
    processedInput !== null && userInput !== '' && intent !== 'quiet' && intent !== 'impersonate';
  // From here on the chat the macros read holds the sent message (ST `sendMessageAsUser` pushes it before
  // `Generate` assembles anything): `{{lastMessage}}`, `{{lastUserMessage}}`, `{{lastMessageId}}`, … see it.
  // Its own expansion above ran before the push, as in ST.
  if (inputJoinsChat && processedInput !== null && Array.isArray(macroContext.chat)) {
    macroContext.chat.push({
      mes: processedInput,
      is_user: true,
      is_system: false,
      name: userName,
      send_date: input.now,
    });
  }

  // The author's note and where the persona goes. ST `setFloatingPrompt` runs after the input is sent and
  // before the lorebook scan, counting the user messages of `context.chat` then: every user message of the
  // history (hidden ones too: hiding sets `is_system`, not `is_user`) plus this turn's input when it joined
  // the chat (normal; never continue, regenerate, swipe, impersonate or quiet, which send nothing).
  const { note, warnings: noteWarnings } = readAuthorsNote(input.authors_note);
  const { persona, warnings: personaWarnings } = resolvePersona(input.user);
  warnings.push(...noteWarnings, ...personaWarnings);
  const userMessageCount = (macroContext.chat ?? []).filter((m) => m.is_user === true).length;
  const noteSchedule = authorsNoteSchedule(note.interval, userMessageCount, Boolean(input.character));
  // The persona as ST stores it (`power_user.persona_description`, not trimmed): what its author's-note and
  // at-depth placements take, before their own macro pass.
  const personaRaw = input.user.description ?? '';

  // ST `Generate` calls `getCharacterCardFields` right after sending the input: each card field (and the
  // persona) trimmed and through `baseChatReplace` (a macro pass), once. Those values are both the prompt's
  // markers and the lorebook's `globalScanData` (`matchCharacterDescription`, …), so an entry keyed on the
  // user's name matches `{{user}}` in the description.
  const examplesEnabled = policy.policy.source_selection.examples.enabled;
  const cardFields = {
    persona: input.user.description ? field(input.user.description) : '',
    description: field(str(card.description)),
    personality: field(str(card.personality)),
    scenario: field(str(card.scenario)),
    mes_example: examplesEnabled ? field(str(card.mes_example)) : '',
    depth_prompt: depthPrompt ? field(str(depthPrompt.prompt)) : '',
    creator_notes: field(str(card.creator_notes)),
  };

  // Prompt regexes over the history, at the depths counted above.
  const history: ChatHistoryEntry[] = kept.map((m, index) => {
    const depth = kept.length - index - (inputJoinsChat ? 0 : 1) - (intent === 'continue' ? 1 : 0);
    const placement = m.role === 'user' ? REGEX_PLACEMENTS.user_input : REGEX_PLACEMENTS.ai_output;
    const content = runRegex(m.content, placement, 'prompt', depth);
    return {
      role: m.role === 'user' ? 'user' : 'assistant',
      content,
      name: m.name,
      is_narrator: m.role === 'system' || m.is_narrator === true,
      token_count: content === m.content && m.token_count != null ? m.token_count : undefined,
      floor_no: m.floor_no,
      ref: m.message_id,
    };
  });
  const withInput: ChatHistoryEntry[] =
    inputJoinsChat && processedInput !== null
      ? [
          ...history,
          {
            role: 'user',
            content: runRegex(processedInput, REGEX_PLACEMENTS.user_input, 'prompt', 0),
            name: userName,
            floor_no: input.next_floor_no,
            is_current_input: true,
          },
        ]
      : history;

  // 4. Lorebooks.
  const available = Math.max(0, maxInput - reserved);
  const worldbookEnabled = policy.policy.source_selection.worldbook.enabled;
  const excluded: Array<{ kind: string; reason: string; count: number }> = [...selection.excluded_sources];
  const scanSources: Partial<Record<LorebookScanSourceKind, string | null>> = {
    persona_description: cardFields.persona,
    character_description: cardFields.description,
    character_personality: cardFields.personality,
    character_depth_prompt: cardFields.depth_prompt,
    scenario: cardFields.scenario,
    creator_notes: cardFields.creator_notes,
  } as Partial<Record<LorebookScanSourceKind, string | null>>;
  const personaScanText =
    worldbookEnabled && persona.position === 'at_depth' && personaRaw
      ? sub(personaRaw, { where: 'persona_description' })
      : '';
  const activation = activateLorebooks({
    books: worldbookEnabled
      ? input.lorebooks.map((b) => ({
          id: b.id,
          name: b.name,
          source: b.source,
          entries: b.entries,
          ...(b.defaults ? { defaults: b.defaults } : {}),
        }))
      : [],
    messages: withInput.map((m) => ({ text: m.content, name: m.name })),
    intent,
    settings: input.lorebook_settings,
    maxPromptTokens: available,
    timedState: input.timed_state ?? emptyLorebookTimedState(),
    dryRun: input.dry_run === true,
    seed: input.seed,
    scanSources,
    // ST `Generate`: `setExtensionPrompt(QUIET_PROMPT, quiet_prompt, IN_PROMPT, 0, true)` just before the
    // world-info scan, and `checkWorldInfo` adds every extension prompt marked `scan` to the buffer: a quiet
    // generation's prompt is scanned (it is not a chat message).
    // ST `addPersonaDescriptionExtensionPrompt` sets the persona at depth as extension prompt
    // `PERSONA_DESCRIPTION` with `scan: true`. It runs after the scan, but ST's extension prompts live until
    // the chat is reloaded and ST's prompt manager runs a dry `Generate` when a chat loads and after every
    // reply, so each real generation's scan finds it (after QUIET_PROMPT, in key-creation order) and reads
    // it through `getExtensionPromptByName` (a macro pass over the raw text). docs/decisions.md "Author's
    // note and persona position".
    extensionPrompts: [
      ...(intent === 'quiet' && processedInput ? [processedInput] : []),
      ...(personaScanText ? [personaScanText] : []),
    ],
    substitute: (text) => sub(text, { where: 'lorebook' }),
    tokenCounter: tokens,
    debug: { matches: input.debug?.include_worldbook_matches === true },
  });
  if (!worldbookEnabled && input.lorebooks.length > 0) {
    excluded.push({ kind: 'worldbook', reason: 'source_selection_disabled', count: input.lorebooks.length });
  }
  const placement = activation.placement;
  for (const outlet of placement.outlets) outlets[outlet.name] = outlet.content;

  // 5. Injections: plan, then the lorebook placements join the lorebook.
  const planned = planInjections(input.injections ?? [], { mode, now: input.now, tokens });
  let wiBefore = placement.before.content;
  let wiAfter = placement.after.content;
  const anTop = [placement.authorsNoteTop.content];
  // ST `getExtensionPrompt` runs a macro pass over the in-chat text of its extension prompts (WI at depth,
  // author's note, character's note, persona): the assembly does it where `expand_as` says so.
  const depthInjections: DepthInjection[] = placement.atDepth.map((g) => ({
    content: g.content,
    depth: g.depth,
    role: g.role,
    order: 100,
    kind: 'extension' as const,
    key: `customDepthWI-${g.depth}-${g.role}`,
    source_id: `worldbook:depth:${g.depth}:${g.role}`,
    expand_as: 'worldbook_depth',
  }));
  for (const p of planned.planned) {
    if (!LOREBOOK_PLACEMENTS.has(p.item.placement)) continue;
    const apply = (anchor: string) => {
      p.trace.applied = true;
      p.trace.placement_resolved = p.item.placement;
      p.trace.anchor_resolved = anchor;
    };
    if (p.item.placement === 'worldbook_before') {
      wiBefore = [wiBefore, p.item.content].filter(Boolean).join('\n');
      apply('worldInfoBefore');
    } else if (p.item.placement === 'worldbook_after') {
      wiAfter = [wiAfter, p.item.content].filter(Boolean).join('\n');
      apply('worldInfoAfter');
    } else if (p.item.placement === 'worldbook_author_note_top') {
      // Like the lorebook's own top entries, only on a turn the note is inserted.
      if (noteSchedule.scheduled) {
        anTop.push(p.item.content);
        apply('authorsNoteTop');
      } else {
        p.trace.not_applied_reason = 'prompt_section_absent';
      }
    } else if (p.item.placement === 'worldbook_depth') {
      depthInjections.push({
        content: p.item.content,
        depth: p.params.depth ?? 0,
        role: 'system',
        order: 100,
        kind: 'extension',
        key: `injection-${String(p.index).padStart(4, '0')}`,
        source_id: `injection:${p.index}`,
      });
      apply(`depth:${p.params.depth ?? 0}`);
    }
  }
  // The author's note (ST extension prompt `2_floating_prompt`): on a turn it is inserted, the lorebook's
  // top/bottom entries (ST `checkWorldInfo`), then the persona at TOP_AN/BOTTOM_AN (ST
  // `addPersonaDescriptionExtensionPrompt`) are merged around its raw text; on other turns all of them stay
  // out. In chat it is an extension prompt at its depth and role (key `2_floating_prompt` sorts before
  // `DEPTH_PROMPT`, `PERSONA_DESCRIPTION` and `customDepthWI-*`); in prompt it stands beside `main`.
  const personaInNote =
    (persona.position === 'top_an' || persona.position === 'bottom_an') && personaRaw
      ? { text: personaRaw, side: persona.position === 'top_an' ? ('top' as const) : ('bottom' as const) }
      : null;
  const mergedNote = noteSchedule.scheduled
    ? mergeAuthorsNote({
        note: note.prompt,
        worldbookTop: anTop.filter(Boolean).join('\n'),
        worldbookBottom: placement.authorsNoteBottom.content,
        persona: personaInNote,
      })
    : { text: '', parts: [] as AuthorsNotePart[] };
  if (mergedNote.text && note.position === 'in_chat' && isInjectionDepth(note.depth)) {
    depthInjections.push({
      content: mergedNote.text,
      depth: note.depth,
      role: note.role,
      order: 100,
      kind: 'extension',
      key: '2_floating_prompt',
      source_id: 'authors_note',
      expand_as: 'authors_note',
    });
  }
  // A depth that is not a number (`Number('x')`) matches no in-chat depth in ST, so nothing is placed.
  const depthPromptDepth = depthPrompt ? Number(depthPrompt.depth ?? 4) : NaN;
  if (depthPrompt && str(depthPrompt.prompt).trim() && Number.isFinite(depthPromptDepth)) {
    // ST script.js: `setExtensionPrompt(DEPTH_PROMPT, charDepthPrompt, IN_CHAT, depth_prompt.depth ?? 4, …,
    // getExtensionPromptRoleByName(depth_prompt.role ?? 'system'))`, which stores `Number(depth)` and takes
    // a role as a name or as its number (0 system, 1 user, 2 assistant); anything else is system.
    const depth = depthPromptDepth;
    const roleOf = depthPrompt.role;
    const role =
      roleOf === 'user' || roleOf === 1
        ? 'user'
        : roleOf === 'assistant' || roleOf === 2
          ? 'assistant'
          : 'system';
    // `getCharacterCardFields` made the first macro pass; `getExtensionPrompt` makes the next.
    depthInjections.push({
      content: cardFields.depth_prompt,
      depth,
      role,
      order: 100,
      kind: 'extension',
      key: 'DEPTH_PROMPT',
      source_id: 'character_depth_prompt',
      expand_as: 'character_depth_prompt',
    });
  }
  // ST `addPersonaDescriptionExtensionPrompt` AT_DEPTH: `setExtensionPrompt('PERSONA_DESCRIPTION',
  // persona_description, IN_CHAT, persona_description_depth, true, persona_description_role)`, the raw text.
  if (persona.position === 'at_depth' && personaRaw && isInjectionDepth(persona.depth)) {
    depthInjections.push({
      content: personaRaw,
      depth: persona.depth,
      role: persona.role,
      order: 100,
      kind: 'extension',
      key: 'PERSONA_DESCRIPTION',
      source_id: 'persona_description',
      expand_as: 'persona_description',
    });
  }
  const inPrompt: InPromptExtension[] = [];
  const memoryEnabled = policy.policy.source_selection.memory.enabled;
  const memoryText = input.memory_summary?.trim() ? input.memory_summary : null;
  if (memoryText && memoryEnabled)
    inPrompt.push({ identifier: 'memory', content: memoryText, role: 'system', position: 'end' });
  else if (memoryText) excluded.push({ kind: 'memory', reason: 'source_selection_disabled', count: 1 });
  // ST `preparePromptsForChatCompletion`: the note "in prompt" is system prompt `authorsNote` at
  // `getPromptPosition` (BEFORE_PROMPT → start, IN_PROMPT → end), after the summary, its raw text.
  if (mergedNote.text && note.position !== 'in_chat') {
    inPrompt.push({
      identifier: 'authorsNote',
      content: mergedNote.text,
      role: note.role,
      position: note.position === 'before_prompt' ? 'start' : 'end',
      expand_as: 'authors_note',
    });
  }
  if (!examplesEnabled && str(card.mes_example).trim())
    excluded.push({ kind: 'examples', reason: 'source_selection_disabled', count: 1 });
  const anchoredTokens = planned.planned
    .filter((p) => !LOREBOOK_PLACEMENTS.has(p.item.placement))
    .reduce((n, p) => n + p.trace.token_count + 4, 0);

  // 6. SillyTavern's assembly.
  const supportsPrefill = input.provider.kind === 'anthropic';
  const assembled = assembleChatCompletion({
    preset: input.preset?.data ?? {},
    prompt_order_character_id: input.character?.id ?? null,
    generation_type: intent,
    user_name: userName,
    char_name: charName,
    card: {
      description: cardFields.description,
      personality: cardFields.personality,
      scenario: cardFields.scenario,
      mes_example: cardFields.mes_example,
      system_prompt: str(card.system_prompt).trim(),
      post_history_instructions: str(card.post_history_instructions).trim(),
    },
    // ST `preparePromptsForChatCompletion` pushes the raw `power_user.persona_description` (not
    // getCharacterCardFields' trimmed, expanded copy): the marker's one pass is the assembly's.
    persona_description: personaRaw,
    persona_in_prompt: persona.position === 'in_prompt',
    world_info_before: wiBefore,
    world_info_after: wiAfter,
    world_info_examples_before: examplesEnabled
      ? placement.examples.filter((e) => e.position === 'before').map((e) => e.content)
      : [],
    world_info_examples_after: examplesEnabled
      ? placement.examples.filter((e) => e.position === 'after').map((e) => e.content)
      : [],
    history: withInput,
    depth_injections: depthInjections,
    in_prompt_extensions: inPrompt,
    quiet_prompt: intent === 'quiet' ? (processedInput ?? undefined) : undefined,
    supports_assistant_prefill: supportsPrefill && policy.policy.delivery.allow_assistant_prefill,
    max_context_tokens: maxInput - anchoredTokens,
    max_output_tokens: reserved,
    substitute: sub,
    tokens,
  });

  // What became of the author's note and the persona (runtime_trace.authors_note / .persona).
  const inChatInserted = new Set(assembled.trace.in_chat_inserted_entry_ids);
  const placedInPrompt = (identifier: string) =>
    assembled.trace.in_prompt_extensions.find((e) => e.identifier === identifier)?.placed_as;
  // Beside an absolute main, an extension is one of main's injections: in the prompt only when it was
  // inserted (main's depth is one ST walks).
  const reachedPrompt = (identifier: string) => {
    const placed = placedInPrompt(identifier);
    return placed === 'main' || (placed === 'main_injection' && inChatInserted.has(identifier));
  };
  const authorsNoteTrace = traceAuthorsNote({
    note,
    schedule: noteSchedule,
    userMessageCount,
    merged: mergedNote,
    inChatInserted,
    inPromptPlacement: placedInPrompt('authorsNote'),
    worldbookEntries: placement.authorsNoteTop.entries.length + placement.authorsNoteBottom.entries.length,
  });
  const personaTrace = tracePersona({
    persona,
    description: personaRaw,
    note: authorsNoteTrace,
    inChatInserted,
    markerPlaced: assembled.annotated.some((m) => m.slot === 'personaDescription'),
    scanned: personaScanText !== '',
  });

  // Outlets that no prompt used become their own section after the lorebook (never dropped, issue 4).
  let annotated: AnnotatedMessage[] = assembled.annotated;
  const usedOutlets = new Set(
    session.diagnostics().traces.length > 0 ? findOutletUses(input.preset?.data, Object.keys(outlets)) : [],
  );
  const outletSections = placement.outlets.filter((o) => o.content && !usedOutlets.has(o.name));
  if (outletSections.length > 0) {
    const anchorSlots = [
      'worldInfoAfter',
      'scenario',
      'charPersonality',
      'charDescription',
      'worldInfoBefore',
      'main',
    ];
    let at = -1;
    for (const slot of anchorSlots) {
      at = lastIndex(annotated, (m) => m.slot === slot);
      if (at >= 0) break;
    }
    const sections: AnnotatedMessage[] = outletSections.map((o) => ({
      role: 'system',
      content: o.content,
      identifier: `outlet:${o.name}`,
      slot: `outlet:${o.name}`,
      tokens: tokens.count(o.content) + 4,
    }));
    annotated = [...annotated.slice(0, at + 1), ...sections, ...annotated.slice(at + 1)];
  }

  // Injections next to their anchors.
  const floorsInWindow = [
    ...new Set(
      annotated.filter((m) => m.floor_no !== undefined && !m.injected).map((m) => m.floor_no as number),
    ),
  ].sort((a, b) => a - b);
  annotated = anchorInjections(annotated, planned.planned, floorsInWindow, tokens);

  // 7. Squash, structure and delivery.
  const presetSettings = preset?.settings;
  const squashed = presetSettings?.squash_system_messages
    ? squashSystemMessages(annotated, tokens)
    : annotated;
  const postMode = parsePostProcessingMode(input.post_processing) ?? 'none';
  if (input.post_processing !== undefined && parsePostProcessingMode(input.post_processing) === null) {
    warnings.push({
      code: 'invalid_post_processing',
      message: `Unknown post_processing ${JSON.stringify(input.post_processing)}; none is used`,
    });
  }
  const postProcessed = postProcessPrompt(
    squashed.map((m) => ({ role: m.role, content: m.content, ...(m.name ? { name: m.name } : {}) })),
    postMode,
    { charName, userName },
  );
  const structured = applyStructure({
    messages: postProcessed.messages.map((m) => ({
      role: m.role,
      content: m.content,
      ...(m.name ? { name: m.name } : {}),
    })),
    policy: policy.policy,
    user_name: userName,
    char_name: charName,
    ends_with_prefill: assembled.trace.assistant_prefill_strategy === 'prefill_message',
  });
  const messages = structured.messages;
  const unchanged =
    postMode === 'none' &&
    structured.trace.mode === 'default' &&
    structured.trace.merged_count === 0 &&
    structured.trace.rewritten_assistant_count === 0 &&
    structured.trace.rewritten_system_count === 0 &&
    !structured.trace.assistant_prefill_transcriptized;
  const tokenEstimate = unchanged
    ? squashed.reduce((n, m) => n + m.tokens, 0) + 3
    : messages.reduce((n, m) => n + tokens.count(m.content) + 4, 0) + 3;

  // 8. Report.
  const trimReasons: TrimReason[] = [];
  if (assembled.trace.history.dropped_oldest > 0)
    trimReasons.push({
      kind: 'history',
      reason: 'budget_oldest_first',
      count: assembled.trace.history.dropped_oldest,
    });
  const examplesDropped = assembled.trace.examples.blocks_total - assembled.trace.examples.blocks_included;
  if (examplesDropped > 0)
    trimReasons.push({ kind: 'examples', reason: 'budget_whole_blocks', count: examplesDropped });
  if (activation.budget.overflowed)
    trimReasons.push({ kind: 'worldbook', reason: 'worldbook_budget', count: 1 });
  const injectionRejected = planned.trace.filter(
    (t) => t.budget_status === 'rejected_by_total_limit' || t.budget_status === 'rejected_by_item_limit',
  ).length;
  if (injectionRejected > 0)
    trimReasons.push({ kind: 'injection', reason: 'injection_token_limits', count: injectionRejected });
  if (assembled.trace.budget.mandatory_exceeded) {
    trimReasons.push({ kind: 'mandatory_overflow', reason: 'mandatory_prompts_exceed_budget', count: 1 });
    warnings.push({
      code: 'mandatory_prompts_exceed_budget',
      message: 'The prompts that are never trimmed do not fit the budget',
    });
  }

  const postRules = scripts
    .map((s) => s.script)
    .filter((s) => {
      const placements = Array.isArray(s.placement) ? s.placement : [s.placement];
      return (
        s.disabled !== true &&
        s.promptOnly !== true &&
        s.markdownOnly !== true &&
        placements.includes(REGEX_PLACEMENTS.ai_output)
      );
    })
    .map((s) => ({ name: str(s.scriptName), scope: null as string | null }));

  // Messages are plain {role, content, name?} objects built in one key order, so JSON text is stable.
  const digest = `sha256:${createHash('sha256')
    .update(JSON.stringify(messages.map((m) => [m.role, m.content, m.name ?? null])))
    .digest('hex')}`;
  const activatedUids = Object.values(activation.activatedEntryUids).flat();
  const boundBooks = input.lorebooks.filter((b) => b.source !== 'character');
  const firstBook = boundBooks[0] ?? null;
  const injectionItems = trimInjectionTrace(planned.trace);
  const macro = session.diagnostics();
  const reservedCollisions = Object.keys(macro.mutation_preview.local).filter((k) =>
    RESERVED_VARIABLES.has(k),
  );

  return {
    messages,
    token_estimate: tokenEstimate,
    available_for_reply: Math.max(0, maxInput - tokenEstimate),
    prompt_snapshot: {
      preset_id: input.preset?.id ?? null,
      preset_updated_at: input.preset?.updated_at ?? null,
      preset_version: input.preset?.version ?? null,
      worldbook_id: firstBook?.id ?? null,
      worldbook_updated_at: firstBook?.updated_at ?? null,
      worldbook_version: firstBook?.version ?? null,
      worldbook_ids: input.lorebooks.map((b) => b.id),
      regex_profile_id: input.regex?.profile_id ?? null,
      regex_profile_updated_at: input.regex?.updated_at ?? null,
      regex_profile_version: input.regex?.version ?? null,
      worldbook_activated_entry_uids: activatedUids,
      worldbook_activated_entries: activation.activatedEntryUids,
      regex_pre_rule_names: [...new Set(preRules.map((r) => r.name))],
      regex_post_rule_names: postRules.map((r) => r.name),
      prompt_mode: mode,
      prompt_digest: digest,
      token_estimate: tokenEstimate,
      messages: messages.map((m) => ({ ...m })),
    },
    assembly: {
      mode,
      prompt_intent: intent,
      assistant_prefill_applied: assembled.trace.assistant_prefill_applied,
      assistant_prefill_strategy:
        structured.trace.assistant_prefill_strategy ?? assembled.trace.assistant_prefill_strategy,
      preset_used: input.preset !== null,
      selected_prompt_order_character_id: assembled.trace.selected_prompt_order_character_id,
      ignored_prompt_order_character_ids: assembled.trace.ignored_prompt_order_character_ids,
      continue_nudge_applied: assembled.trace.continue_nudge_applied,
      continue_nudge_text: assembled.trace.continue_nudge_text,
      names_behavior_applied: assembled.trace.names_behavior_applied,
      trigger_filtered_entry_ids: [
        ...assembled.trace.trigger_filtered_entry_ids,
        ...activation.triggerFilteredEntries.map((e) => `${e.bookId}:${e.uid}`),
      ],
      in_chat_inserted_entry_ids: assembled.trace.in_chat_inserted_entry_ids,
      worldbook_hits: activation.hits,
      regex_pre_rules: preRules,
      regex_post_rules: postRules,
      memory_summary_injected: memoryText !== null && memoryEnabled && reachedPrompt('memory'),
      reserved_variable_collisions: reservedCollisions,
      unsupported_preset_fields: assembled.trace.unsupported_preset_fields,
      ignored_preset_fields: assembled.trace.ignored_preset_fields,
      unresolved_preset_markers: assembled.trace.unresolved_preset_markers,
      preset_warnings: assembled.trace.preset_warnings,
      preprocessed_user_message: processedInput,
      worldbook_matches: activation.matches,
    },
    runtime_trace: {
      macro,
      budgets: {
        max_input_tokens: maxInput,
        reserved_completion_tokens: reserved,
        available,
        used: tokenEstimate,
        source: budgetSource,
        worldbook_budget: activation.budget.limit,
        trim_reasons: trimReasons,
      },
      source_selection: { excluded_sources: excluded },
      history_normalization: {
        total: input.history.length,
        included:
          assembled.trace.history.included - (processedInput !== null && withInput !== history ? 1 : 0),
        hidden: input.history.filter((m) => m.is_hidden).length,
        dropped_oldest: assembled.trace.history.dropped_oldest,
      },
      structure: structured.trace,
      post_processing: postProcessed.trace,
      delivery: {
        assistant_prefill_strategy:
          structured.trace.assistant_prefill_strategy ?? assembled.trace.assistant_prefill_strategy,
        require_last_user: policy.policy.delivery.require_last_user,
      },
      injection: summariseInjections(injectionItems),
      worldbook: {
        passes: activation.passes,
        warnings: activation.warnings.map((w) => ({ code: w.code, message: w.message })),
        budget: activation.budget,
        outlets_as_sections: outletSections.map((o) => o.name),
      },
      regex: { warnings: regexWarnings },
      policy: { resolved: policy.policy, sources: policy.sources, warnings: policy.warnings },
      assembly: assembled.trace,
      tool_transport: { mode: 'none' },
      authors_note: authorsNoteTrace,
      persona: personaTrace,
    },
    user_input_processed: processedInput,
    timed_state_after: activation.timedState,
    warnings,
  };
}

/** Variable names the runtime itself uses; a macro writing one is reported. */
const RESERVED_VARIABLES = new Set(['__proto__', 'constructor', 'prototype']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lastIndex<T>(items: T[], pred: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (pred(items[i])) return i;
  return -1;
}

/** Outlet names referenced as `{{outlet::name}}` in the preset's prompts (those are not added again). */
function findOutletUses(preset: unknown, names: string[]): string[] {
  if (!isObject(preset) || !Array.isArray(preset.prompts)) return [];
  const text = preset.prompts
    .map((p) => (isObject(p) && typeof p.content === 'string' ? p.content : ''))
    .join('\n');
  return names.filter((name) => new RegExp(`{{\\s*outlet::\\s*${escapeRegex(name)}\\s*}}`, 'i').test(text));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
