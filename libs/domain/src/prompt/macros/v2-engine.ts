/**
 * ST 1.18's newer macro engine (macros/engine/MacroEngine.js, MacroCstWalker.js, definitions/*.js):
 * pre-processors (`{{time_UTC±N}}` → `{{time::UTC±N}}`, legacy `<USER>`-style markers), a structural walk
 * that evaluates arguments and scoped content inside-out before each macro's handler (`{{if}}` opts out
 * and resolves only the chosen branch), then post-processors (`\{`/`\}` unescaped, legacy `{{trim}}`
 * eating the newlines around it, stray `{{else}}` markers removed). Unknown macros keep their braces with
 * nested macros resolved. A macro called with the wrong number or type of arguments stays as written.
 */
import { linearReplace } from './linear-regex';
import { MacroRuntime, MACRO_LIMITS } from './runtime';
import { getStringHash, isFalseBoolean } from './st-compat';
import {
  canAcceptScopedContent,
  ELSE_MARKER,
  lookup,
  macroInfo,
  trimScopedContent,
  type ResolvedDef,
} from './v2-definitions';
import {
  MAX_NESTING,
  parseDocument,
  type MacroNode,
  type ParsedNode,
  type ParseResult,
  type Span,
  type VarNode,
} from './v2-parser';
import type { VariableScope } from './variables';

interface Item {
  node: ParsedNode;
  scoped?: { start: number; end: number; closingEnd: number };
  keepRaw?: boolean;
}

const VAR_MACRO_NAMES: Record<string, [string, string]> = {
  get: ['getvar', 'getglobalvar'],
  set: ['setvar', 'setglobalvar'],
  add: ['addvar', 'addglobalvar'],
  inc: ['incvar', 'incglobalvar'],
  dec: ['decvar', 'decglobalvar'],
};

/** A resolved value left as it is (no `escapeValue`). */
const asIs = (value: string): string => value;

/** Forward-scan steps the scoped pairing of one text may take, per macro in it. */
const MAX_PAIRING_STEPS_PER_MACRO = 64;

/** One evaluation of one top-level text (ST builds one env per `substituteParams` call). */
export class V2Evaluator {
  readonly contentHash: number;
  private originalTaken = false;
  private overflow = false;
  /**
   * How many walks are running inside each other: one per macro argument or scoped content being
   * evaluated (`{{if}}` blocks nested in blocks, arguments in arguments). Deeper than MAX_NESTING,
   * a text is left as written: each level re-reads its whole content, so 4,000 nested `{{if 1}}`
   * blocks took 25 s and 2.5 GB, and then overflowed the stack.
   */
  private depth = 0;
  /**
   * Characters this evaluation may still parse (MACRO_LIMITS.parseBudget*): every nested level and
   * every `{{if}}` re-reads its content, and the budget keeps the total a small multiple of the input.
   */
  private parseBudget: number;
  private budgetSpent = false;

  constructor(
    private readonly rt: MacroRuntime,
    input: string,
    private readonly original: string | undefined,
    private readonly dynamicMacros: Map<string, string>,
    /**
     * ST `postProcessFn` (`env.functions.postProcess`, applied in `#resolveMacro`): every value a known
     * macro resolves to, nested ones and those inside `{{if}}` branches included (so a branch's values
     * are escaped again with the `{{if}}`'s own); not the raw text of an unknown or invalid macro, nor a
     * `.var`/`$var` shorthand.
     */
    private readonly escapeValue?: (value: string) => string,
  ) {
    this.contentHash = getStringHash(input);
    this.parseBudget = MACRO_LIMITS.parseBudgetFactor * input.length + MACRO_LIMITS.parseBudgetFloor;
  }

  /** Parses a text against the budget; null once it is spent (the text is then left as written). */
  parse(text: string): ParseResult | null {
    if (text.length > this.parseBudget) {
      this.parseBudget = 0;
      if (!this.budgetSpent)
        this.rt.warn(
          'macro_limit',
          'Macros nested or repeated beyond the evaluation budget were left as text.',
        );
      this.budgetSpent = true;
      return null;
    }
    this.parseBudget -= text.length;
    return parseDocument(text);
  }

  /** env.functions.original: one-shot; absent (null: macro stays as written) when no original was given. */
  takeOriginal(): string | null {
    if (this.original === undefined) return null;
    if (this.originalTaken) return '';
    this.originalTaken = true;
    return this.original;
  }

  /** MacroEngine.evaluate: pre-processors, walk, core post-processors. */
  evaluate(input: string, contextOffset = 0): string {
    if (!input) return '';
    const pre = input
      .replace(/{{time_(UTC[+-]\d+)}}/gi, (_m, offset: string) => `{{time::${offset}}}`)
      .replace(/<USER>/gi, '{{user}}')
      .replace(/<BOT>/gi, '{{char}}')
      .replace(/<CHAR>/gi, '{{char}}')
      .replace(/<GROUP>/gi, '{{group}}')
      .replace(/<CHARIFNOTGROUP>/gi, '{{charIfNotGroup}}');
    const walked = this.walk(pre, contextOffset);
    const unescaped = walked.replace(/\\([{}])/g, '$1');
    const trimmed = /{{trim}}/i.test(unescaped)
      ? linearReplace(unescaped, /(?:\r?\n)*{{trim}}(?:\r?\n)*/gi, () => '')
      : unescaped;
    return trimmed.split(ELSE_MARKER).join('');
  }

  /** The `resolve()` handlers get: a nested evaluation with the same environment. */
  evaluateNested(text: string, contextOffset: number): string {
    return this.evaluate(text, contextOffset);
  }

  /** MacroCstWalker.evaluateDocument / #evaluateRawContent. */
  walk(text: string, contextOffset: number): string {
    if (!text) return '';
    if (this.depth >= MAX_NESTING) {
      this.rt.warn('macro_nesting_limit', 'Macros nested too deeply were left as text.');
      return text;
    }
    this.depth++;
    try {
      return this.walkText(text, contextOffset);
    } finally {
      this.depth--;
    }
  }

  private walkText(text: string, contextOffset: number): string {
    const parsed = this.parse(text);
    if (!parsed) return text;
    if (parsed.nestingLimitHit)
      this.rt.warn('macro_nesting_limit', 'Macros nested too deeply were left as text.');
    if (parsed.invalid.length > 0) {
      const at = parsed.invalid[0];
      this.rt.warn(
        'macro_syntax',
        `Malformed macro left as text: ${JSON.stringify(text.slice(at, at + 40))}`,
      );
    }
    const items = this.processScoped(parsed.nodes, text);
    let result = '';
    let cursor = 0;
    for (const item of items) {
      if (item.node.start > cursor) result += text.slice(cursor, item.node.start);
      if (item.keepRaw) {
        result += text.slice(item.node.start, item.node.end);
        cursor = item.node.end;
      } else {
        result += this.evaluateNode(item, text, contextOffset);
        cursor = item.scoped ? item.scoped.closingEnd : item.node.end;
      }
      if (result.length > MACRO_LIMITS.maxOutputLength) {
        if (!this.overflow)
          this.rt.warn(
            'macro_limit',
            `Macro output exceeds ${MACRO_LIMITS.maxOutputLength} characters; truncated.`,
          );
        this.overflow = true;
        return result.slice(0, MACRO_LIMITS.maxOutputLength);
      }
    }
    if (cursor < text.length) result += text.slice(cursor);
    return result;
  }

  private processScoped(nodes: ParsedNode[], text: string): Item[] {
    const items: Item[] = nodes.map((node) => ({ node }));
    const infos = items
      .map((item, index) => {
        const info = macroInfo(item.node, text);
        return (
          info && {
            index,
            item,
            info,
            lower: info.name.toLowerCase(),
            accepts: canAcceptScopedContent(info),
            matched: false,
          }
        );
      })
      .filter((x) => x !== null);
    const inside = new Set<number>();
    const remove = new Set<number>();
    // The last closing macro of each name: an opener after it (or of a name never closed) has nothing
    // to pair with, so its forward scan is skipped (16,000 plain `{{getvar::x}}` scanned each other: 1.4 s).
    const lastClosing = new Map<string, number>();
    infos.forEach((info, k) => info.info.isClosing && lastClosing.set(info.lower, k));
    // Each opener scans forward for its closing macro, over the macros of its own name that count for
    // the pairing (closing ones and openers that take scoped content; others never change the depth):
    // scanning every later macro of any name was quadratic in inline macros (200 `{{// note}}` before one
    // block comment). Openers that never find a closing macro (12,000 `{{if 1}}` before one `{{/if}}`)
    // still scan their name's rest; past this many steps the remaining openers are left unpaired (plain
    // macros), with a warning.
    const counted = new Map<string, number[]>();
    const firstCounted = infos.map((x, k) => {
      let list = counted.get(x.lower);
      if (!list) counted.set(x.lower, (list = []));
      if (x.info.isClosing || x.accepts) list.push(k);
      return list.length;
    });
    let steps = MAX_PAIRING_STEPS_PER_MACRO * infos.length + 4096;
    pairing: for (let i = 0; i < infos.length; i++) {
      const open = infos[i];
      if (open.info.isClosing || open.matched || inside.has(open.index)) continue;
      if ((lastClosing.get(open.lower) ?? -1) < i) continue;
      const list = counted.get(open.lower)!;
      let depth = 1;
      let closing = -1;
      for (let p = firstCounted[i]; p < list.length; p++) {
        if (--steps < 0) {
          this.rt.warn(
            'macro_limit',
            'Too many scoped macros without a closing macro; the rest were not paired.',
          );
          break pairing;
        }
        const j = list[p];
        const other = infos[j];
        if (other.matched) continue;
        if (other.info.isClosing) {
          depth--;
          if (depth === 0) {
            closing = j;
            break;
          }
        } else {
          depth++;
        }
      }
      if (closing === -1) continue;
      const close = infos[closing];
      open.matched = true;
      close.matched = true;
      if (!open.accepts) {
        open.item.keepRaw = true;
        close.item.keepRaw = true;
        continue;
      }
      open.item.scoped = {
        start: open.item.node.end,
        end: close.item.node.start,
        closingEnd: close.item.node.end,
      };
      remove.add(close.index);
      for (let k = open.index + 1; k < close.index; k++) {
        inside.add(k);
        remove.add(k);
      }
    }
    for (const x of infos) if (x.info.isClosing && !x.matched) x.item.keepRaw = true;
    return items.filter((_, index) => !remove.has(index));
  }

  private evaluateNode(item: Item, text: string, contextOffset: number): string {
    const node = item.node;
    if (node.kind === 'var') return this.evaluateVariable(node, text, contextOffset);
    const lower = node.name.toLowerCase();
    this.rt.use(lower);
    const def = lookup(node.name);
    const delay = def?.delay === true;
    const args: string[] = [];
    const evaluated: { value: string; start: number; end: number }[] = [];
    for (const span of node.args) {
      const raw = text.slice(span.start, span.end);
      const value = delay ? raw : this.walk(raw, contextOffset + span.start);
      args.push(value);
      if (span.end > span.start) evaluated.push({ value, start: span.start, end: span.end });
    }
    if (item.scoped) {
      const { start, end } = item.scoped;
      if (start >= end) {
        args.push('');
      } else {
        const raw = text.slice(start, end);
        let value = raw;
        if (!delay) {
          value = this.walk(raw, contextOffset + start);
          if (!node.flags.includes('#')) value = trimScopedContent(value);
        }
        args.push(value);
        evaluated.push({ value, start, end });
      }
    }
    evaluated.sort((a, b) => a.start - b.start);
    let rawInner = '';
    let cursor = node.innerStart;
    for (const entry of evaluated) {
      if (entry.start > cursor) rawInner += text.slice(cursor, entry.start);
      rawInner += entry.value;
      cursor = entry.end;
    }
    if (cursor < node.innerEnd) rawInner += text.slice(cursor, node.innerEnd);
    return this.resolve(
      node,
      lower,
      def,
      args,
      rawInner,
      item.scoped !== undefined,
      contextOffset + node.start,
    );
  }

  private resolve(
    node: MacroNode,
    lower: string,
    def: ResolvedDef | undefined,
    args: string[],
    rawInner: string,
    isScoped: boolean,
    globalOffset: number,
  ): string {
    const raw = `{{${rawInner}}}`;
    const escape = this.escapeValue ?? asIs;
    if (this.dynamicMacros.has(lower)) return escape(this.dynamicMacros.get(lower)!);
    if (!def) {
      this.rt.warn('macro_unknown', `Unknown macro "${node.name}" left as text.`, lower);
      return raw;
    }
    const valid = def.list ? args.length >= def.min : args.length >= def.min && args.length <= def.max;
    if (!valid) {
      const expected = def.list
        ? `at least ${def.min}`
        : def.min === def.max
          ? `${def.min}`
          : `between ${def.min} and ${def.max}`;
      this.rt.warn(
        'macro_invalid_arguments',
        `Macro "${def.name}" called with ${args.length} arguments but expects ${expected}.`,
        lower,
      );
      if (def.strict) return raw;
    }
    const unnamed = args.slice(0, Math.min(args.length, def.max));
    for (let i = 0; i < Math.min(def.types.length, unnamed.length); i++) {
      const value = unnamed[i].trim();
      const ok =
        def.types[i] === 'integer'
          ? /^-?\d+$/.test(value)
          : def.types[i] === 'number'
            ? Number.isFinite(Number(value))
            : true;
      if (!ok) {
        this.rt.warn(
          'macro_invalid_arguments',
          `Macro "${def.name}" argument ${i + 1} expected ${def.types[i]} but got "${unnamed[i]}".`,
          lower,
        );
        if (def.strict) return raw;
      }
    }
    const list = def.list ? (args.length > def.max ? args.slice(def.max) : []) : null;
    try {
      const value = def.handler({
        name: def.name,
        args,
        unnamed,
        list,
        flags: node.flags,
        isScoped,
        globalOffset,
        evaluator: this,
        rt: this.rt,
      });
      return value === null ? raw : escape(value);
    } catch (error) {
      this.rt.warn(
        'macro_internal_error',
        `Macro "${def.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
        lower,
      );
      return raw;
    }
  }

  /** MacroCstWalker.#evaluateVariableExpr: `.name` (local) / `$name` (global) with operators. */
  private evaluateVariable(node: VarNode, text: string, contextOffset: number): string {
    const { overlay } = this.rt;
    const scope: VariableScope = node.scope;
    const g = scope === 'global' ? 1 : 0;
    const name = node.varName;
    const prefix = scope === 'global' ? '$' : '.';
    const macro = `${prefix}${node.operator ?? ''}`;
    let cached: string | null = null;
    const value = (): string => {
      if (cached === null) {
        const span: Span | null = node.value;
        cached = span ? this.walk(text.slice(span.start, span.end), contextOffset + span.start).trim() : '';
      }
      return cached;
    };
    const get = () => overlay.get(scope, name);
    const isFalsy = (v: string | number) => !v || isFalseBoolean(String(v));
    const numeric = (symbol: string, test: (a: number, b: number) => boolean): string => {
      const a = Number(get());
      const b = Number(value());
      if (Number.isNaN(a) || Number.isNaN(b)) {
        this.rt.warn(
          'macro_invalid_operand',
          `Variable shorthand "${symbol}" needs numbers.`,
          VAR_MACRO_NAMES.get[g],
        );
        return 'false';
      }
      return test(a, b) ? 'true' : 'false';
    };
    const use = (op: keyof typeof VAR_MACRO_NAMES) => this.rt.use(VAR_MACRO_NAMES[op][g]);
    switch (node.operator) {
      case null:
        use('get');
        return String(get());
      case '=':
        use('set');
        overlay.set(scope, name, value(), macro);
        return '';
      case '++':
        use('inc');
        return String(overlay.add(scope, name, 1, macro, 'inc'));
      case '--':
        use('dec');
        return String(overlay.add(scope, name, -1, macro, 'dec'));
      case '+=':
        use('add');
        overlay.add(scope, name, value(), macro);
        return '';
      case '-=': {
        use('add');
        const n = Number(value());
        if (!Number.isNaN(n)) overlay.add(scope, name, -n, macro);
        else
          this.rt.warn(
            'macro_invalid_operand',
            `Variable shorthand "-=" needs a number, got "${value()}".`,
            VAR_MACRO_NAMES.add[g],
          );
        return '';
      }
      case '||': {
        use('get');
        const current = get();
        return isFalsy(current) ? value() : String(current);
      }
      case '??':
        use('get');
        return overlay.has(scope, name) ? String(get()) : value();
      case '||=': {
        use('get');
        const current = get();
        if (isFalsy(current)) {
          use('set');
          overlay.set(scope, name, value(), macro);
          return value();
        }
        return String(current);
      }
      case '??=':
        use('get');
        if (!overlay.has(scope, name)) {
          use('set');
          overlay.set(scope, name, value(), macro);
          return value();
        }
        return String(get());
      case '==':
        use('get');
        return String(get()) === value() ? 'true' : 'false';
      case '!=':
        use('get');
        return String(get()) !== value() ? 'true' : 'false';
      case '>':
        use('get');
        return numeric('>', (a, b) => a > b);
      case '>=':
        use('get');
        return numeric('>=', (a, b) => a >= b);
      case '<':
        use('get');
        return numeric('<', (a, b) => a < b);
      case '<=':
        use('get');
        return numeric('<=', (a, b) => a <= b);
      default:
        return '';
    }
  }
}

/** Builds the per-call dynamic macro table (keys lower-cased, as ST does). */
export function dynamicMacroTable(...sources: (Record<string, string> | undefined)[]): Map<string, string> {
  const table = new Map<string, string>();
  for (const source of sources) {
    if (!source) continue;
    for (const [key, value] of Object.entries(source)) table.set(key.toLowerCase(), String(value ?? ''));
  }
  return table;
}
