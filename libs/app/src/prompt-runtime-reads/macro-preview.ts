import { macroContextOf, type PromptEngineInput } from '@hearth/domain/prompt/engine';
import { MacroSession, type MacroEngineKind } from '@hearth/domain/prompt/macros';

/** One text through a fresh macro session of the turn: the expansion and `runtime_trace.macro`. */
export function previewMacros(input: PromptEngineInput, text: string, engine?: MacroEngineKind) {
  const session = new MacroSession(macroContextOf(input, { engine }));
  const expanded = session.expand(text, { source: 'preview' });
  return { text: expanded, macro_engine: session.engine, macro: session.diagnostics() };
}
