import type { MacroContext, MacroEngineKind } from '../macros';
import type { PromptEngineInput } from './engine.types';

const str = (value: unknown) => (typeof value === 'string' ? value : '');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The macro context of a turn, built from its engine input (names, persona, card fields, chat, variables,
 * seed, clock). `buildPrompt` and the macro preview both use it, so a preview expands a text as the next
 * prompt would. `outlets` is the object the assembly fills after lorebook activation.
 */
export function macroContextOf(
  input: PromptEngineInput,
  options: { engine?: MacroEngineKind; outlets?: Record<string, string>; generationType?: string } = {},
): MacroContext {
  const card = (input.character?.data ?? {}) as Record<string, unknown>;
  const charName = str(card.name) || 'Assistant';
  const extensions = isObject(card.extensions) ? card.extensions : {};
  const depthPrompt = isObject(extensions.depth_prompt) ? extensions.depth_prompt : null;
  return {
    engine: options.engine ?? input.macro_engine,
    user: input.user.name || 'User',
    char: charName,
    persona: input.user.description ?? '',
    character: {
      name: charName,
      description: str(card.description),
      personality: str(card.personality),
      scenario: str(card.scenario),
      systemPrompt: str(card.system_prompt),
      postHistoryInstructions: str(card.post_history_instructions),
      mesExamples: str(card.mes_example),
      version: str(card.character_version),
      depthPrompt: str(depthPrompt?.prompt),
      creatorNotes: str(card.creator_notes),
      firstMessage: str(card.first_mes),
      alternateGreetings: Array.isArray(card.alternate_greetings)
        ? card.alternate_greetings.filter((g): g is string => typeof g === 'string')
        : [],
    },
    model: input.provider.model_id ?? '',
    input: input.user_input ?? '',
    chat: input.history.map((m) => ({
      mes: m.content,
      is_user: m.role === 'user',
      name: m.name,
      is_system: m.is_hidden ? true : m.is_narrator ? '' : false,
    })),
    now: input.now,
    timezone: input.timezone,
    seed: input.seed,
    chatId: input.session_id ?? null,
    variables: input.variables,
    outlets: options.outlets ?? {},
    generationType: options.generationType ?? input.intent,
    // ST authors-note.js `registerAuthorsNoteMacros`: `{{authorsNote}}` is the chat's note text as written
    // (`chat_metadata.note_prompt ?? ''`); Hearth keeps no character or default note, so
    // `{{charAuthorsNote}}` and `{{defaultAuthorsNote}}` are ST's value without one: ''.
    dynamicMacros: {
      authorsNote: typeof input.authors_note?.prompt === 'string' ? input.authors_note.prompt : '',
      charAuthorsNote: '',
      defaultAuthorsNote: '',
    },
  };
}
