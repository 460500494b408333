/**
 * Parser for ST 1.18's newer macro engine (macros/engine/MacroLexer.js + MacroParser.js), hand-written
 * with the same token rules instead of chevrotain:
 * - `{{` opens a macro; a `{` right before `{{` is text; `\{` never opens one.
 * - after `{{`: flags `! ? ~ # / >` and whitespace, then `//` (comment), `.name`/`$name` (variable
 *   shorthand) or an identifier `[a-zA-Z][\w-]*`, which must end at whitespace, `:`, `|` or `}`.
 * - arguments: `::`-separated when the first token after the identifier is `::`; otherwise one argument
 *   (after an optional single `:` or whitespace) that may contain colons. Arguments are located by their
 *   non-whitespace tokens, so they come out trimmed. Nested macros are allowed anywhere in an argument.
 * - a macro ends at the first `}}` outside nested macros. A macro that never closes, or whose head is not
 *   valid, is plain text (its nested complete macros still count, as chevrotain's recovery keeps them).
 * Never throws; nesting deeper than `MAX_NESTING` is left as text.
 */
export const MAX_NESTING = 64;

export interface Span {
  start: number;
  /** Exclusive. */
  end: number;
}

export type VarOperator =
  '++' | '--' | '=' | '+=' | '-=' | '||' | '??' | '||=' | '??=' | '==' | '!=' | '>' | '>=' | '<' | '<=';

export interface MacroNode {
  kind: 'macro';
  start: number;
  end: number;
  flags: string[];
  /** As written (`//` for comments). */
  name: string;
  /** Located (trimmed) argument spans; an empty argument has `start === end`. */
  args: Span[];
  innerStart: number;
  innerEnd: number;
}

export interface VarNode {
  kind: 'var';
  start: number;
  end: number;
  flags: string[];
  scope: 'local' | 'global';
  varName: string;
  operator: VarOperator | null;
  value: Span | null;
}

export type ParsedNode = MacroNode | VarNode;

export interface ParseResult {
  nodes: ParsedNode[];
  /** Macro openers that were left as text (unclosed or invalid), for warnings. */
  invalid: number[];
  nestingLimitHit: boolean;
  /** Macro heads parsed and structure tokens scanned: linear in the text's tokens (tests hold it to that). */
  steps: number;
}

const FLAG_CHARS = '!?~#/>';
const IDENTIFIER = /[a-zA-Z][\w-]*/y;
const VAR_IDENTIFIER = /[a-zA-Z](?:[\w-]*\w)?/y;
const VAR_OPERATORS: VarOperator[] = [
  '++',
  '--',
  '??=',
  '??',
  '||=',
  '||',
  '-=',
  '==',
  '!=',
  '>=',
  '>',
  '<=',
  '<',
  '+=',
  '=',
];

function isSpace(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const code = ch.charCodeAt(0);
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(ch);
}

/** The next `{{`, `}}` or (when separators are wanted) `::` from a position. */
const STRUCTURE = /\{\{|\}\}|::/g;
const BRACES = /\{\{|\}\}/g;

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text[i])) i++;
  return i;
}

/** Parses every top-level macro of a text. */
export function parseDocument(text: string): ParseResult {
  const state: ParseState = { invalid: [], nestingLimitHit: false, memo: new Map(), steps: 0 };
  const nodes: ParsedNode[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open === -1) break;
    // `{{{x}}`: the first brace is text, the macro starts at the last `{{` of the run.
    let start = open;
    while (text[start + 2] === '{') start++;
    const node = parseMacroAt(text, start, 0, state);
    if (node && node !== NO_CLOSE) {
      nodes.push(node);
      i = node.end;
    } else {
      state.invalid.push(start);
      i = start + 2;
    }
  }
  return { nodes, invalid: state.invalid, nestingLimitHit: state.nestingLimitHit, steps: state.steps };
}

interface ParseState {
  invalid: number[];
  nestingLimitHit: boolean;
  /** Parse results by opener position (a failed nested parse is never re-tried: linear-ish, not exponential). */
  memo: Map<number, ParsedNode | typeof NO_CLOSE | null>;
  steps: number;
}

/** A macro whose region runs to the end of the text without `}}`: every enclosing macro fails too. */
const NO_CLOSE = Symbol('no-close');

/** Scans an argument region from `i` to the closing `}}`; returns the end of the region (index of `}}`). */
function scanToClose(
  text: string,
  i: number,
  depth: number,
  state: ParseState,
  separators: number[] | null,
): number {
  const pattern = separators ? STRUCTURE : BRACES;
  while (i < text.length) {
    pattern.lastIndex = i;
    const found = pattern.exec(text);
    if (!found) return -1;
    state.steps++;
    const at = found.index;
    const token = found[0];
    if (token === '}}') return at;
    if (token === '{{') {
      let start = at;
      while (text[start + 2] === '{') start++;
      const nested = parseMacroAt(text, start, depth + 1, state);
      if (nested === NO_CLOSE) return -1;
      i = nested ? nested.end : start + 2;
      continue;
    }
    separators!.push(at);
    i = at + 2;
  }
  return -1;
}

function locate(text: string, start: number, end: number): Span {
  let s = start;
  let e = end;
  while (s < e && isSpace(text[s])) s++;
  while (e > s && isSpace(text[e - 1])) e--;
  return { start: s, end: e };
}

function parseMacroAt(
  text: string,
  open: number,
  depth: number,
  state: ParseState,
): ParsedNode | typeof NO_CLOSE | null {
  const memo = state.memo.get(open);
  if (memo !== undefined) return memo;
  state.steps++;
  // Every result is kept, also one the nesting limit shaped (it depends on the depth the opener was
  // first reached at), and an opener past the limit stays text when a later attempt starts at it:
  // re-parsing them from each opener after an enclosing failure was quadratic (4,000 nested
  // `{{if::1::` took 2.5 s, 30,000 unclosed `{{a::` 1 s). Only a text nested deeper than the limit
  // is affected: it may keep a few more levels as text than the limit alone would.
  let node: ParsedNode | typeof NO_CLOSE | null = null;
  if (depth > MAX_NESTING) state.nestingLimitHit = true;
  else node = parseMacroHead(text, open, depth, state);
  state.memo.set(open, node);
  return node;
}

function parseMacroHead(
  text: string,
  open: number,
  depth: number,
  state: ParseState,
): ParsedNode | typeof NO_CLOSE | null {
  const flags: string[] = [];
  let i = open + 2;
  for (;;) {
    if (i >= text.length) return null;
    if (text.startsWith('}}', i)) return null;
    if (text.startsWith('//', i)) {
      return parseArguments(text, open, i + 2, '//', flags, depth, state);
    }
    const ch = text[i];
    if (ch === '.' || ch === '$') return parseVariable(text, open, i, flags, depth, state);
    if (FLAG_CHARS.includes(ch)) {
      flags.push(ch);
      i++;
      continue;
    }
    if (isSpace(ch)) {
      i++;
      continue;
    }
    IDENTIFIER.lastIndex = i;
    const match = IDENTIFIER.exec(text);
    if (!match) return null;
    const name = match[0];
    i += name.length;
    const next = text[i];
    if (!(isSpace(next) || next === ':' || next === '|' || next === '}')) return null;
    return parseArguments(text, open, i, name, flags, depth, state);
  }
}

function parseArguments(
  text: string,
  open: number,
  afterName: number,
  name: string,
  flags: string[],
  depth: number,
  state: ParseState,
): MacroNode | typeof NO_CLOSE {
  const innerStart = open + 2;
  const argsStart = skipSpace(text, afterName);
  const doubleColon = text.startsWith('::', argsStart);
  const separators: number[] = [];
  const scanFrom = doubleColon ? argsStart + 2 : argsStart;
  const close = scanToClose(text, scanFrom, depth, state, doubleColon ? separators : null);
  if (close === -1) return NO_CLOSE;
  const args: Span[] = [];
  if (doubleColon) {
    let segmentStart = argsStart + 2;
    for (const sep of separators) {
      args.push(locate(text, segmentStart, sep));
      segmentStart = sep + 2;
    }
    args.push(locate(text, segmentStart, close));
  } else {
    const single = text[argsStart] === ':' ? argsStart + 1 : argsStart;
    const span = locate(text, single, close);
    if (span.end > span.start || single !== argsStart) args.push(span);
  }
  return { kind: 'macro', start: open, end: close + 2, flags, name, args, innerStart, innerEnd: close };
}

function parseVariable(
  text: string,
  open: number,
  prefixAt: number,
  flags: string[],
  depth: number,
  state: ParseState,
): VarNode | typeof NO_CLOSE | null {
  const scope = text[prefixAt] === '.' ? 'local' : 'global';
  let i = skipSpace(text, prefixAt + 1);
  VAR_IDENTIFIER.lastIndex = i;
  const match = VAR_IDENTIFIER.exec(text);
  if (!match) return null;
  const varName = match[0];
  i = skipSpace(text, i + varName.length);
  if (text.startsWith('}}', i)) {
    return { kind: 'var', start: open, end: i + 2, flags, scope, varName, operator: null, value: null };
  }
  const operator = VAR_OPERATORS.find((op) => text.startsWith(op, i));
  if (!operator) return null;
  i += operator.length;
  if (operator === '++' || operator === '--') {
    i = skipSpace(text, i);
    if (!text.startsWith('}}', i)) return null;
    return { kind: 'var', start: open, end: i + 2, flags, scope, varName, operator, value: null };
  }
  const close = scanToClose(text, i, depth, state, null);
  if (close === -1) return NO_CLOSE;
  return {
    kind: 'var',
    start: open,
    end: close + 2,
    flags,
    scope,
    varName,
    operator,
    value: locate(text, i, close),
  };
}
