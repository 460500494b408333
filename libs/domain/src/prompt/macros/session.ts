/**
 * The entry points. A `MacroSession` is one prompt assembly: every text it expands shares one variable
 * overlay, one seeded random stream and one diagnostics record, so a `{{setvar}}` in an early prompt is
 * seen by a `{{getvar}}` later in the same turn, as in ST where macros run at assembly (§j). Nothing is
 * ever written: writes come back as `staged_mutations` and `mutation_preview`. Never throws.
 */
import { evaluateClassic, leftoverMacroNames } from './classic-engine';
import { MacroRuntime, type CardField } from './runtime';
import type {
  ExpandOptions,
  MacroContext,
  MacroDiagnostics,
  MacroEngineKind,
  MacroResult,
  MacroTrace,
  MacroWarning,
} from './types';
import { dynamicMacroTable, V2Evaluator } from './v2-engine';
import type { JsonValue, VariableScope } from './variables';

export const DEFAULT_MACRO_ENGINE: MacroEngineKind = 'v2';

export class MacroSession {
  readonly engine: MacroEngineKind;
  private readonly runtime: MacroRuntime;
  private readonly traces: MacroTrace[] = [];

  constructor(context: MacroContext) {
    const safe: MacroContext = context && typeof context === 'object' ? context : { now: 0, seed: '' };
    this.engine = safe.engine === 'classic' ? 'classic' : DEFAULT_MACRO_ENGINE;
    this.runtime = new MacroRuntime({ ...safe, now: Number.isFinite(safe.now) ? safe.now : 0 });
  }

  /** Expands the macros of one text with the session's shared state. */
  expand(text: string, options: ExpandOptions = {}): string {
    const input = typeof text === 'string' ? text : '';
    const engine: MacroEngineKind =
      options.engine === 'classic' || options.engine === 'v2' ? options.engine : this.engine;
    const rt = this.runtime;
    rt.source = options.source ?? '';
    rt.callNames = new Set();
    const mutationsBefore = rt.overlay.mutationCount();
    const dynamic = dynamicMacroTable(rt.context.dynamicMacros, options.dynamicMacros);
    let output: string;
    rt.cardExpander = (field) =>
      engine === 'classic'
        ? evaluateClassic(rt, field, { dynamicMacros: dynamic })
        : new V2Evaluator(rt, field, undefined, dynamic).evaluate(field);
    try {
      if (engine === 'classic') {
        output = evaluateClassic(rt, input, {
          original: options.original,
          dynamicMacros: dynamic,
          escapeValue: options.escapeValue,
        });
        for (const name of leftoverMacroNames(output)) {
          rt.use(name);
          rt.warn('macro_unknown', `Unknown macro "${name}" left as text.`, name);
        }
      } else {
        output = new V2Evaluator(rt, input, options.original, dynamic, options.escapeValue).evaluate(input);
      }
    } catch (error) {
      rt.warn(
        'macro_internal_error',
        `Macro expansion failed; text left as is: ${error instanceof Error ? error.message : String(error)}`,
      );
      output = input;
    }
    this.traces.push({
      source: rt.source,
      engine,
      input_length: input.length,
      output_length: output.length,
      used_names: [...rt.callNames],
      mutation_count: rt.overlay.mutationCount() - mutationsBefore,
    });
    rt.source = '';
    return output;
  }

  /**
   * A card field as the assembly should place it (the character description marker, …): trimmed and
   * macro-expanded once per session, the same value `{{description}}` gives (ST getCharacterCardFields).
   */
  cardField(field: CardField, options: { source?: string } = {}): string {
    const rt = this.runtime;
    const dynamic = dynamicMacroTable(rt.context.dynamicMacros);
    rt.source = options.source ?? `card:${field}`;
    rt.cardExpander = (text) =>
      this.engine === 'classic'
        ? evaluateClassic(rt, text, { dynamicMacros: dynamic })
        : new V2Evaluator(rt, text, undefined, dynamic).evaluate(text);
    try {
      return rt.card(field);
    } catch (error) {
      rt.warn(
        'macro_internal_error',
        `Card field ${field} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return '';
    } finally {
      rt.source = '';
    }
  }

  /** Expands one text and returns it with the session's diagnostics so far. */
  expandWithResult(text: string, options: ExpandOptions = {}): MacroResult {
    const engine = options.engine === 'classic' || options.engine === 'v2' ? options.engine : this.engine;
    const output = this.expand(text, options);
    return { text: output, engine, ...this.diagnostics() };
  }

  /** `runtime_trace.macro`: warnings, used names, staged mutations, mutation preview, traces. */
  diagnostics(): MacroDiagnostics {
    const seen = new Set<string>();
    const warnings: MacroWarning[] = [];
    for (const w of this.runtime.warnings) {
      const key = `${w.code}\u0000${w.message}\u0000${w.source ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      warnings.push({ ...w });
    }
    return {
      warnings,
      used_names: this.runtime.names(),
      staged_mutations: this.runtime.overlay.mutations(),
      mutation_preview: this.runtime.overlay.preview(),
      traces: this.traces.map((t) => ({ ...t, used_names: [...t.used_names] })),
    };
  }

  /** The variable view with this session's staged writes applied (nothing is persisted). */
  variablesAfter(scope: VariableScope): Record<string, JsonValue> {
    return this.runtime.overlay.snapshot(scope);
  }
}

/** Expands one text on its own (a fresh session): text plus `runtime_trace.macro` fields. */
export function expandMacros(text: string, context: MacroContext, options: ExpandOptions = {}): MacroResult {
  return new MacroSession(context).expandWithResult(text, options);
}
