import type { PromptEngineInput } from '@hearth/domain/prompt/engine';
import { MacroSession, type MacroContext, type MacroEngineKind } from '@hearth/domain/prompt/macros';

const str = (value: unknown) => (typeof value === 'string' ? value : '');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The macro context a turn's assembly uses, built from the same engine input (names, persona, card
 * fields, chat, variables, seed, clock), so a preview expands a text as the next prompt would.
 */
export function macroContextOf(input: PromptEngineInput, engine?: MacroEngineKind): MacroContext {
  const card = (input.character?.data ?? {}) as Record<string, unknown>;
  const charName = str(card.name) || 'Assistant';
  const extensions = isObject(card.extensions) ? card.extensions : {};
  const depthPrompt = isObject(extensions.depth_prompt) ? extensions.depth_prompt : null;
  return {
    engine: engine ?? input.macro_engine,
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
    outlets: {},
    generationType: input.intent,
  };
}

/** One text through a fresh macro session of the turn: the expansion and `runtime_trace.macro`. */
export function previewMacros(input: PromptEngineInput, text: string, engine?: MacroEngineKind) {
  const session = new MacroSession(macroContextOf(input, engine));
  const expanded = session.expand(text, { source: 'preview' });
  return { text: expanded, macro_engine: session.engine, macro: session.diagnostics() };
}
