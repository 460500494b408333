/**
 * The chat-completion preset as the assembler reads it (external-formats.md §e): the prompt list, the
 * prompt order that applies, and the settings that shape assembly. Reading never throws: a malformed
 * field falls back to ST's default and is reported in `warnings`.
 */

export type PromptRole = 'system' | 'user' | 'assistant';

export interface PresetPrompt {
  identifier: string;
  name: string;
  role: PromptRole;
  content: string;
  system_prompt: boolean;
  marker: boolean;
  /** 0 relative (placed by its slot in the order), 1 absolute (injected into the history at a depth). */
  injection_position: 0 | 1;
  injection_depth: number;
  injection_order: number;
  injection_trigger: string[];
  forbid_overrides: boolean;
}

export interface PromptOrderEntry {
  identifier: string;
  enabled: boolean;
}

/** ST's global prompt-order strategy uses this dummy character id; 100000 is the legacy default list. */
export const GLOBAL_PROMPT_ORDER_ID = 100001;
export const LEGACY_PROMPT_ORDER_ID = 100000;

/** ST's default order (`promptManagerDefaultPromptOrder`), used when a preset has no usable order. */
export const DEFAULT_PROMPT_ORDER: readonly PromptOrderEntry[] = [
  { identifier: 'main', enabled: true },
  { identifier: 'worldInfoBefore', enabled: true },
  { identifier: 'personaDescription', enabled: true },
  { identifier: 'charDescription', enabled: true },
  { identifier: 'charPersonality', enabled: true },
  { identifier: 'scenario', enabled: true },
  { identifier: 'enhanceDefinitions', enabled: false },
  { identifier: 'nsfw', enabled: true },
  { identifier: 'worldInfoAfter', enabled: true },
  { identifier: 'dialogueExamples', enabled: true },
  { identifier: 'chatHistory', enabled: true },
  { identifier: 'jailbreak', enabled: true },
];

/** Markers ST fills itself (§e.1). */
export const BUILT_IN_MARKERS = [
  'chatHistory',
  'dialogueExamples',
  'worldInfoBefore',
  'worldInfoAfter',
  'charDescription',
  'charPersonality',
  'scenario',
  'personaDescription',
] as const;

/** Settings of the preset that assembly uses, with ST 1.18's defaults. */
export interface PresetAssemblySettings {
  openai_max_context: number;
  openai_max_tokens: number;
  names_behavior: -1 | 0 | 1 | 2;
  send_if_empty: string;
  impersonation_prompt: string;
  new_chat_prompt: string;
  new_group_chat_prompt: string;
  new_example_chat_prompt: string;
  continue_nudge_prompt: string;
  group_nudge_prompt: string;
  wi_format: string;
  scenario_format: string;
  personality_format: string;
  assistant_prefill: string;
  assistant_impersonation: string;
  continue_prefill: boolean;
  continue_postfix: string;
  squash_system_messages: boolean;
  wrap_in_quotes: boolean;
}

export const DEFAULT_PRESET_SETTINGS: PresetAssemblySettings = {
  openai_max_context: 4095,
  openai_max_tokens: 300,
  names_behavior: 0,
  send_if_empty: '',
  impersonation_prompt:
    "[Write your next reply from the point of view of {{user}}, using the chat history so far as a guideline for the writing style of {{user}}. Don't write as {{char}} or system. Don't describe actions of {{char}}.]",
  new_chat_prompt: '[Start a new Chat]',
  new_group_chat_prompt: '[Start a new group chat. Group members: {{group}}]',
  new_example_chat_prompt: '[Example Chat]',
  continue_nudge_prompt: '[Continue your last message without repeating its original content.]',
  group_nudge_prompt: '[Write the next reply only as {{char}}.]',
  wi_format: '{0}',
  scenario_format: '{{scenario}}',
  personality_format: '{{personality}}',
  assistant_prefill: '',
  assistant_impersonation: '',
  continue_prefill: false,
  continue_postfix: ' ',
  squash_system_messages: false,
  wrap_in_quotes: false,
};

/** Preset fields that shape the request or the connection rather than the prompt (reported as ignored). */
const CONNECTION_FIELDS = new Set([
  'chat_completion_source',
  'temperature',
  'frequency_penalty',
  'presence_penalty',
  'top_p',
  'top_k',
  'top_a',
  'min_p',
  'repetition_penalty',
  'stream_openai',
  'seed',
  'n',
  'reverse_proxy',
  'proxy_password',
  'max_context_unlocked',
  'bias_preset_selected',
  'show_external_models',
  'api_url_scale',
  'use_alt_scale',
  'bypass_status_check',
  'image_inlining',
  'inline_image_quality',
  'media_inlining',
  'function_calling',
  'show_thoughts',
  'reasoning_effort',
  'verbosity',
  'enable_web_search',
  'request_images',
  'request_image_resolution',
  'request_image_aspect_ratio',
  'custom_url',
  'custom_include_body',
  'custom_exclude_body',
  'custom_include_headers',
  'custom_prompt_post_processing',
  'openrouter_use_fallback',
  'openrouter_force_instruct',
  'openrouter_group_models',
  'openrouter_sort_models',
  'openrouter_providers',
  'openrouter_allow_fallbacks',
  'openrouter_middleout',
  'claude_use_sysprompt',
  'use_makersuite_sysprompt',
  'use_sysprompt',
  'human_sysprompt_message',
  'vertexai_region',
  'vertexai_auth_mode',
  'zai_endpoint',
  'bind_preset_to_connection',
  'extensions',
]);

/** Fields the assembler reads. */
const ASSEMBLY_FIELDS = new Set([
  'prompts',
  'prompt_order',
  'main_prompt',
  'nsfw_prompt',
  'jailbreak_prompt',
  'jailbreak_system',
  'nsfw_toggle',
  'enhance_definitions',
  'nsfw_first',
  ...Object.keys(DEFAULT_PRESET_SETTINGS),
]);

/** Fields ST itself has but Hearth does not act on (reported as unsupported, never silently lost). */
const UNSUPPORTED_FIELDS = new Set<string>(['jailbreak_system', 'nsfw_first']);

export interface PresetWarning {
  code: string;
  message: string;
  field?: string;
}

export interface ReadPreset {
  prompts: Map<string, PresetPrompt>;
  order: PromptOrderEntry[];
  selected_prompt_order_character_id: number | string | null;
  ignored_prompt_order_character_ids: Array<number | string>;
  settings: PresetAssemblySettings;
  unsupported_preset_fields: string[];
  ignored_preset_fields: string[];
  unresolved_preset_markers: string[];
  warnings: PresetWarning[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asRole(value: unknown): PromptRole {
  return value === 'user' || value === 'assistant' ? value : 'system';
}

function asInt(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Math.trunc(Number(value));
  return fallback;
}

function readPrompt(raw: Record<string, unknown>): PresetPrompt | null {
  if (typeof raw.identifier !== 'string' || raw.identifier === '') return null;
  return {
    identifier: raw.identifier,
    name: typeof raw.name === 'string' ? raw.name : raw.identifier,
    role: asRole(raw.role),
    content: typeof raw.content === 'string' ? raw.content : '',
    system_prompt: raw.system_prompt === true,
    marker: raw.marker === true,
    injection_position: asInt(raw.injection_position, 0) === 1 ? 1 : 0,
    injection_depth: Math.max(0, asInt(raw.injection_depth, 4)),
    injection_order: asInt(raw.injection_order, 100),
    injection_trigger: Array.isArray(raw.injection_trigger)
      ? raw.injection_trigger.filter((t): t is string => typeof t === 'string')
      : [],
    forbid_overrides: raw.forbid_overrides === true,
  };
}

/** ST's `chatCompletionDefaultPrompts` that are not markers: identifier, name, content. */
const ST_DEFAULT_PROMPTS: Array<[string, string, string]> = [
  [
    'main',
    'Main Prompt',
    "Write {{char}}'s next reply in a fictional chat between {{charIfNotGroup}} and {{user}}.",
  ],
  ['nsfw', 'Auxiliary Prompt', ''],
  ['jailbreak', 'Post-History Instructions', ''],
  [
    'enhanceDefinitions',
    'Enhance Definitions',
    "If you have more knowledge of {{char}}, add to the character's lore and personality to enhance them but keep the Character Sheet's definitions absolute.",
  ],
];

/** An empty system prompt with ST's default placement fields (a marker when `marker` is set). */
export function defaultPrompt(identifier: string, name: string, marker = false): PresetPrompt {
  return {
    identifier,
    name,
    role: 'system',
    content: '',
    system_prompt: true,
    marker,
    injection_position: 0,
    injection_depth: 4,
    injection_order: 100,
    injection_trigger: [],
    forbid_overrides: false,
  };
}

/** Old presets keep main/nsfw/jailbreak as top-level strings; ST migrates them into `prompts`. */
const LEGACY_PROMPTS: Array<[string, string, string]> = [
  ['main', 'main_prompt', 'Main Prompt'],
  ['nsfw', 'nsfw_prompt', 'Auxiliary Prompt'],
  ['jailbreak', 'jailbreak_prompt', 'Post-History Instructions'],
];

function readSettings(preset: Record<string, unknown>, warnings: PresetWarning[]): PresetAssemblySettings {
  const s: PresetAssemblySettings = { ...DEFAULT_PRESET_SETTINGS };
  const record = s as unknown as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_PRESET_SETTINGS) as Array<keyof PresetAssemblySettings>) {
    const value = preset[key];
    if (value === undefined || value === null) continue;
    const fallback = DEFAULT_PRESET_SETTINGS[key];
    if (typeof fallback === 'number') {
      const n = asInt(value, Number.NaN);
      if (Number.isNaN(n))
        warnings.push({ code: 'preset_field_invalid', message: `${key} is not a number`, field: key });
      else record[key] = n;
    } else if (typeof fallback === 'boolean') {
      if (typeof value === 'boolean') record[key] = value;
      else warnings.push({ code: 'preset_field_invalid', message: `${key} is not a boolean`, field: key });
    } else if (typeof value === 'string') {
      record[key] = value;
    } else {
      warnings.push({ code: 'preset_field_invalid', message: `${key} is not a string`, field: key });
    }
  }
  if (![-1, 0, 1, 2].includes(s.names_behavior)) {
    warnings.push({
      code: 'preset_field_invalid',
      message: 'names_behavior must be -1, 0, 1 or 2',
      field: 'names_behavior',
    });
    s.names_behavior = 0;
  }
  return s;
}

/**
 * Reads a preset file. `characterOrderId` picks a character-specific `prompt_order` list when the preset
 * has one for it; otherwise the global list (100001), then the legacy list (100000), then ST's default.
 */
export function readPreset(input: unknown, characterOrderId?: number | string | null): ReadPreset {
  const warnings: PresetWarning[] = [];
  const preset = isObject(input) ? input : {};
  if (!isObject(input))
    warnings.push({ code: 'preset_invalid', message: 'The preset is not an object; defaults are used' });

  const prompts = new Map<string, PresetPrompt>();
  if (Array.isArray(preset.prompts)) {
    preset.prompts.forEach((raw, index) => {
      const prompt = isObject(raw) ? readPrompt(raw) : null;
      if (!prompt) {
        warnings.push({
          code: 'preset_prompt_invalid',
          message: `prompts[${index}] has no identifier`,
          field: `prompts[${index}]`,
        });
        return;
      }
      if (prompts.has(prompt.identifier)) {
        warnings.push({
          code: 'preset_prompt_duplicate',
          message: `prompts[${index}] repeats identifier ${prompt.identifier}; the first one is used`,
          field: `prompts[${index}]`,
        });
        return;
      }
      prompts.set(prompt.identifier, prompt);
    });
  } else if (preset.prompts !== undefined) {
    warnings.push({ code: 'preset_field_invalid', message: 'prompts is not an array', field: 'prompts' });
  }
  // ST's prompt-manager migration (PromptManager.js `registerPromptManagerMigration`): when a preset has a
  // non-empty `main_prompt`/`nsfw_prompt`/`jailbreak_prompt`, its prompts start from ST's defaults (if it
  // has none) and each non-empty legacy text replaces that prompt's content.
  const legacy = LEGACY_PROMPTS.some(([, field]) => typeof preset[field] === 'string' && preset[field]);
  for (const [identifier, field, name] of LEGACY_PROMPTS) {
    const text = preset[field];
    if (typeof text !== 'string' || !text) continue;
    const existing = prompts.get(identifier);
    prompts.set(
      identifier,
      existing ? { ...existing, content: text } : { ...defaultPrompt(identifier, name), content: text },
    );
  }
  // ST `checkForMissingPrompts`: a preset's prompt list lacking one of ST's default prompts gets the
  // default (the main prompt's default text, empty nsfw/jailbreak, the enhance-definitions text).
  if (legacy || Array.isArray(preset.prompts)) {
    for (const [identifier, name, content] of ST_DEFAULT_PROMPTS) {
      if (!prompts.has(identifier)) prompts.set(identifier, { ...defaultPrompt(identifier, name), content });
    }
  }
  // Markers exist even when a preset omits their definitions (ST adds them).
  for (const marker of BUILT_IN_MARKERS) {
    if (!prompts.has(marker)) prompts.set(marker, defaultPrompt(marker, marker, true));
  }

  const lists = new Map<string, { id: number | string; order: PromptOrderEntry[] }>();
  if (Array.isArray(preset.prompt_order)) {
    for (const raw of preset.prompt_order) {
      if (!isObject(raw) || !Array.isArray(raw.order)) continue;
      const id =
        typeof raw.character_id === 'number' || typeof raw.character_id === 'string'
          ? raw.character_id
          : null;
      if (id === null) continue;
      const order = raw.order
        .filter(isObject)
        .filter((e) => typeof e.identifier === 'string')
        .map((e) => ({ identifier: e.identifier as string, enabled: e.enabled !== false }));
      if (!lists.has(String(id))) lists.set(String(id), { id, order });
    }
  }
  const pick =
    (characterOrderId !== undefined && characterOrderId !== null
      ? lists.get(String(characterOrderId))
      : undefined) ??
    lists.get(String(GLOBAL_PROMPT_ORDER_ID)) ??
    lists.get(String(LEGACY_PROMPT_ORDER_ID));
  const order = pick ? pick.order : DEFAULT_PROMPT_ORDER.map((e) => ({ ...e }));
  const selected = pick ? pick.id : null;
  const ignored = [...lists.values()].map((l) => l.id).filter((id) => String(id) !== String(selected));

  const unresolved = order.map((e) => e.identifier).filter((identifier) => !prompts.has(identifier));
  for (const identifier of unresolved) {
    warnings.push({
      code: 'preset_marker_unresolved',
      message: `prompt_order names ${identifier}, which the preset does not define`,
      field: 'prompt_order',
    });
  }

  const unsupported: string[] = [];
  const ignoredFields: string[] = [];
  for (const key of Object.keys(preset)) {
    if (UNSUPPORTED_FIELDS.has(key)) unsupported.push(key);
    else if (ASSEMBLY_FIELDS.has(key)) continue;
    else if (CONNECTION_FIELDS.has(key) || /_model$/.test(key)) ignoredFields.push(key);
    else unsupported.push(key);
  }

  return {
    prompts,
    order,
    selected_prompt_order_character_id: selected,
    ignored_prompt_order_character_ids: ignored,
    settings: readSettings(preset, warnings),
    unsupported_preset_fields: unsupported.sort(),
    ignored_preset_fields: ignoredFields.sort(),
    unresolved_preset_markers: unresolved,
    warnings,
  };
}
