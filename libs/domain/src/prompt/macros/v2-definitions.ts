/**
 * The macro table of ST 1.18's newer engine (macros/definitions/*.js): names, aliases, argument counts
 * and types, handlers. Handlers read the shared runtime; `{{if}}` resolves its branch through the evaluator.
 */
import { MacroRuntime, MACRO_LIMITS } from './runtime';
import { isFalseBoolean, splitLegacyList } from './st-compat';
import type { V2Evaluator } from './v2-engine';
import type { ParsedNode } from './v2-parser';
import type { VariableScope } from './variables';

/** core-macros.js `ELSE_MARKER`. */
export const ELSE_MARKER = '\u0000\u001FELSE\u001F\u0000';

type ArgType = 'string' | 'integer' | 'number';

export interface V2Call {
  name: string;
  args: string[];
  unnamed: string[];
  list: string[] | null;
  flags: string[];
  isScoped: boolean;
  globalOffset: number;
  evaluator: V2Evaluator;
  rt: MacroRuntime;
}

interface V2Def {
  name: string;
  aliases?: string[];
  min?: number;
  max?: number;
  types?: ArgType[];
  list?: boolean;
  strict?: boolean;
  delay?: boolean;
  /** null = leave the macro as written (ST: the handler failed). */
  handler: (call: V2Call) => string | null;
}

export interface ResolvedDef extends Required<Omit<V2Def, 'aliases'>> {
  primary: string;
}

const INSTRUCT_MACROS = [
  'instructStoryStringPrefix',
  'instructStoryStringSuffix',
  'instructInput',
  'instructUserPrefix',
  'instructUserSuffix',
  'instructOutput',
  'instructAssistantPrefix',
  'instructSeparator',
  'instructAssistantSuffix',
  'instructSystemPrefix',
  'instructSystemSuffix',
  'instructFirstOutput',
  'instructFirstAssistantPrefix',
  'instructLastOutput',
  'instructLastAssistantPrefix',
  'instructStop',
  'instructUserFiller',
  'instructSystemInstructionPrefix',
  'instructFirstInput',
  'instructFirstUserPrefix',
  'instructLastInput',
  'instructLastUserPrefix',
  'systemPrompt',
  'defaultSystemPrompt',
  'instructSystem',
  'instructSystemPrompt',
  'chatSeparator',
  'chatStart',
];

const varDefs = (scope: VariableScope): V2Def[] => {
  const g = scope === 'global' ? 'global' : '';
  const n = (verb: string) => `${verb}${g}var`;
  return [
    {
      name: n('set'),
      min: 2,
      max: 2,
      handler: ({ unnamed: [name, value], rt }) => {
        rt.overlay.set(scope, name, value, n('set'));
        return '';
      },
    },
    {
      name: n('add'),
      min: 2,
      max: 2,
      handler: ({ unnamed: [name, value], rt }) => {
        rt.overlay.add(scope, name, value, n('add'));
        return '';
      },
    },
    {
      name: n('inc'),
      min: 1,
      max: 1,
      handler: ({ unnamed: [name], rt }) => String(rt.overlay.add(scope, name, 1, n('inc'), 'inc')),
    },
    {
      name: n('dec'),
      min: 1,
      max: 1,
      handler: ({ unnamed: [name], rt }) => String(rt.overlay.add(scope, name, -1, n('dec'), 'dec')),
    },
    {
      name: n('get'),
      min: 1,
      max: 1,
      handler: ({ unnamed: [name], rt }) => String(rt.overlay.get(scope, name)),
    },
    {
      name: n('has'),
      aliases: [scope === 'global' ? 'globalvarexists' : 'varexists'],
      min: 1,
      max: 1,
      handler: ({ unnamed: [name], rt }) => (rt.overlay.has(scope, name) ? 'true' : 'false'),
    },
    {
      name: n('delete'),
      aliases: [n('flush')],
      min: 1,
      max: 1,
      handler: ({ unnamed: [name], rt }) => {
        rt.overlay.delete(scope, name, n('delete'));
        return '';
      },
    },
  ];
};

const DEFINITIONS: V2Def[] = [
  // utility (core-macros.js)
  {
    name: 'space',
    min: 0,
    max: 1,
    types: ['integer'],
    handler: ({ unnamed: [c], rt }) => repeat(' ', c, rt, 'space'),
  },
  {
    name: 'newline',
    min: 0,
    max: 1,
    types: ['integer'],
    handler: ({ unnamed: [c], rt }) => repeat('\n', c, rt, 'newline'),
  },
  { name: 'noop', handler: () => '' },
  {
    name: 'trim',
    min: 0,
    max: 1,
    handler: ({ unnamed: [content], isScoped }) => (isScoped ? (content ?? '') : '{{trim}}'),
  },
  { name: 'if', min: 2, max: 2, delay: true, handler: ifHandler },
  { name: 'else', handler: () => ELSE_MARKER },
  { name: 'input', handler: ({ rt }) => rt.context.input ?? '' },
  { name: 'maxPrompt', aliases: ['maxPromptTokens'], handler: ({ rt }) => rt.limit('maxPrompt') },
  { name: 'maxContext', aliases: ['maxContextTokens'], handler: ({ rt }) => rt.limit('maxContext') },
  { name: 'maxResponse', aliases: ['maxResponseTokens'], handler: ({ rt }) => rt.limit('maxResponse') },
  { name: 'reverse', min: 1, max: 1, handler: ({ unnamed: [v] }) => Array.from(v).reverse().join('') },
  { name: '//', aliases: ['comment'], min: 1, max: 1, handler: () => '' },
  { name: 'roll', min: 1, max: 1, handler: ({ unnamed: [f], rt }) => rt.roll(f) },
  {
    name: 'random',
    list: true,
    handler: ({ list, rt }) => {
      const items = list && list.length === 1 ? splitLegacyList(list[0], true) : (list ?? []);
      return items.length === 0 ? '' : rt.randomItem(items);
    },
  },
  {
    name: 'pick',
    list: true,
    handler: ({ list, rt, globalOffset, evaluator }) => {
      const items = list && list.length === 1 ? splitLegacyList(list[0], true) : (list ?? []);
      return items.length === 0 ? '' : rt.pickItem(items, evaluator.contentHash, globalOffset, 'v2');
    },
  },
  { name: 'banned', min: 1, max: 1, handler: () => '' },
  { name: 'outlet', min: 1, max: 1, handler: ({ unnamed: [key], rt }) => (key ? rt.outlet(key) : '') },
  // names and card fields (env-macros.js)
  { name: 'user', handler: ({ rt }) => rt.user },
  { name: 'char', handler: ({ rt }) => rt.char },
  { name: 'group', aliases: ['charIfNotGroup'], handler: ({ rt }) => rt.group },
  { name: 'groupNotMuted', handler: ({ rt }) => rt.groupNotMuted },
  { name: 'notChar', handler: ({ rt }) => rt.notChar },
  { name: 'charPrompt', handler: ({ rt }) => rt.card('systemPrompt') },
  { name: 'charInstruction', handler: ({ rt }) => rt.card('postHistoryInstructions') },
  { name: 'charDescription', aliases: ['description'], handler: ({ rt }) => rt.card('description') },
  { name: 'charPersonality', aliases: ['personality'], handler: ({ rt }) => rt.card('personality') },
  { name: 'charScenario', aliases: ['scenario'], handler: ({ rt }) => rt.card('scenario') },
  { name: 'persona', handler: ({ rt }) => rt.card('persona') },
  { name: 'mesExamplesRaw', handler: ({ rt }) => rt.card('mesExamples') },
  { name: 'mesExamples', handler: ({ rt }) => rt.mesExamples },
  { name: 'charDepthPrompt', handler: ({ rt }) => rt.card('depthPrompt') },
  { name: 'charCreatorNotes', aliases: ['creatorNotes'], handler: ({ rt }) => rt.card('creatorNotes') },
  {
    name: 'charFirstMessage',
    aliases: ['greeting'],
    min: 0,
    max: 1,
    types: ['integer'],
    handler: ({ unnamed: [index], rt }) => {
      const i = Number(index ?? 0);
      const c = rt.context.character;
      if (i === 0) return c?.firstMessage ?? '';
      const alternates = c?.alternateGreetings;
      if (!Array.isArray(alternates)) return '';
      return alternates[i - 1]?.trim() ?? '';
    },
  },
  {
    name: 'charVersion',
    aliases: ['version', 'char_version'],
    handler: ({ rt }) => (rt.cardFieldsEnabled ? (rt.context.character?.version ?? '') : ''),
  },
  { name: 'model', handler: ({ rt }) => rt.context.model ?? '' },
  { name: 'original', handler: ({ evaluator }) => evaluator.takeOriginal() },
  { name: 'isMobile', handler: () => 'false' },
  { name: 'lastGenerationType', handler: ({ rt }) => rt.context.generationType ?? '' },
  { name: 'hasExtension', min: 1, max: 1, handler: () => 'false' },
  // chat (chat-macros.js)
  { name: 'lastMessage', handler: ({ rt }) => rt.lastMessage },
  { name: 'lastMessageId', handler: ({ rt }) => String(rt.lastMessageId() ?? '') },
  { name: 'lastUserMessage', handler: ({ rt }) => rt.lastUserMessage },
  { name: 'lastCharMessage', handler: ({ rt }) => rt.lastCharMessage },
  { name: 'firstIncludedMessageId', handler: ({ rt }) => String(rt.context.firstIncludedMessageId ?? '') },
  { name: 'firstDisplayedMessageId', handler: ({ rt }) => String(rt.context.firstDisplayedMessageId ?? '') },
  { name: 'lastSwipeId', handler: ({ rt }) => rt.lastSwipeId },
  { name: 'currentSwipeId', handler: ({ rt }) => rt.currentSwipeId },
  { name: 'allChatRange', handler: ({ rt }) => rt.allChatRange },
  // time (time-macros.js)
  {
    name: 'time',
    min: 0,
    max: 1,
    handler: ({ unnamed: [spec], rt }) => {
      const match = spec ? /^UTC([+-]\d+)$/.exec(spec) : null;
      return match ? rt.formatAtUtcOffset(Number.parseInt(match[1], 10), 'LT') : rt.format('LT');
    },
  },
  { name: 'date', handler: ({ rt }) => rt.format('LL') },
  { name: 'weekday', handler: ({ rt }) => rt.format('dddd') },
  { name: 'isotime', handler: ({ rt }) => rt.format('HH:mm') },
  { name: 'isodate', handler: ({ rt }) => rt.format('YYYY-MM-DD') },
  { name: 'datetimeformat', min: 1, max: 1, handler: ({ unnamed: [f], rt }) => rt.format(f) },
  { name: 'idleDuration', aliases: ['idle_duration'], handler: ({ rt }) => rt.idleDuration() },
  { name: 'timeDiff', min: 2, max: 2, handler: ({ unnamed: [a, b], rt }) => rt.timeDiff(a, b, true) },
  // variables (variable-macros.js)
  ...varDefs('local'),
  ...varDefs('global'),
  // instruct-mode macros: chat completion runs without instruct mode, where ST resolves them to ''
  ...INSTRUCT_MACROS.map((name): V2Def => ({ name, handler: () => '' })),
];

const REGISTRY = new Map<string, ResolvedDef>();
for (const def of DEFINITIONS) {
  const resolved: ResolvedDef = {
    name: def.name,
    primary: def.name,
    min: def.min ?? 0,
    max: def.max ?? 0,
    types: def.types ?? [],
    list: def.list ?? false,
    strict: def.strict ?? true,
    delay: def.delay ?? false,
    handler: def.handler,
  };
  REGISTRY.set(def.name.toLowerCase(), resolved);
  for (const alias of def.aliases ?? []) REGISTRY.set(alias.toLowerCase(), { ...resolved, name: alias });
}

/** Registered v2 macro names (lower case), aliases included. */
export function v2MacroNames(): string[] {
  return [...REGISTRY.keys()];
}

export function lookup(name: string): ResolvedDef | undefined {
  return REGISTRY.get(name.trim().toLowerCase());
}

/** `' '.repeat(n)`: a negative count throws in ST, so the macro stays as written (null). */
function repeat(unit: string, count: string | undefined, rt: MacroRuntime, macro: string): string | null {
  const n = Number(count ?? 1);
  if (n < 0) {
    rt.warn('macro_invalid_arguments', `${macro} count ${n} is negative.`, macro);
    return null;
  }
  if (n > MACRO_LIMITS.maxRepeat) {
    rt.warn('macro_limit', `${macro} count ${n} exceeds ${MACRO_LIMITS.maxRepeat}.`, macro);
    return unit.repeat(MACRO_LIMITS.maxRepeat);
  }
  return unit.repeat(n);
}

/** MacroEngine.trimScopedContent: trim, then remove the first non-empty line's indentation from every line. */
export function trimScopedContent(content: string): string {
  if (!content) return '';
  const lines = content.split('\n');
  let baseIndent = 0;
  for (const line of lines) {
    if (line.trim() !== '') {
      baseIndent = /^[ \t]*/.exec(line)![0].length;
      break;
    }
  }
  if (baseIndent === 0) return content.trim();
  return lines
    .map((line) => {
      const indent = /^[ \t]*/.exec(line)![0].length;
      return indent >= baseIndent ? line.slice(baseIndent) : line.trimStart();
    })
    .join('\n')
    .trim();
}

export interface MacroInfo {
  name: string;
  isClosing: boolean;
  argCount: number;
}

export function macroInfo(node: ParsedNode, text: string): MacroInfo | null {
  if (node.kind !== 'macro') return null;
  let isClosing = node.flags.includes('/');
  if (!isClosing && node.name === '//' && node.args.length > 0) {
    isClosing = text.slice(node.args[0].start, node.args[0].end).startsWith('/');
  }
  return { name: node.name, isClosing, argCount: node.args.length };
}

export function canAcceptScopedContent(info: MacroInfo): boolean {
  const def = lookup(info.name);
  if (!def) return true;
  if (def.list) return false;
  const n = info.argCount + 1;
  return n >= def.min && n <= def.max;
}

/**
 * core-macros.js `splitOnTopLevelElse`. Parsed against the evaluation's budget: once it is spent, the
 * content has no `{{else}}` (and the chosen branch is then left as written too).
 */
function splitOnTopLevelElse(
  content: string,
  evaluator: V2Call['evaluator'],
): { thenBranch: string; elseBranch: string | undefined } {
  const parsed = evaluator.parse(content);
  if (!parsed) return { thenBranch: content, elseBranch: undefined };
  let depth = 0;
  for (const node of parsed.nodes) {
    const info = macroInfo(node, content);
    if (!info) continue;
    if (info.name === 'if' && !info.isClosing && info.argCount === 1) depth++;
    else if (info.name === 'if' && info.isClosing) depth--;
    else if (info.name === 'else' && depth === 0) {
      return { thenBranch: content.slice(0, node.start), elseBranch: content.slice(node.end) };
    }
  }
  return { thenBranch: content, elseBranch: undefined };
}

const SHORTHAND = /^([.$])([a-zA-Z](?:[\w-]*\w)?)$/;

function ifHandler(call: V2Call): string {
  const [rawCondition, rawContent] = call.unnamed;
  const { evaluator, flags, globalOffset } = call;
  let inverted = false;
  let condition = rawCondition;
  if (/^\s*!/.test(rawCondition)) {
    inverted = true;
    condition = rawCondition.replace(/^\s*!\s*/, '');
  }
  condition = evaluator.evaluateNested(condition, globalOffset);
  const shorthand = SHORTHAND.exec(condition);
  if (shorthand) {
    const macro = shorthand[1] === '.' ? 'getvar' : 'getglobalvar';
    condition = evaluator.evaluateNested(`{{${macro}::${shorthand[2]}}}`, globalOffset);
  } else {
    const def = lookup(condition);
    if (def && def.min === 0 && condition.trim() !== '')
      condition = evaluator.evaluateNested(`{{${condition}}}`, globalOffset);
  }
  let isFalsy = condition === '' || isFalseBoolean(condition);
  if (inverted) isFalsy = !isFalsy;
  const { thenBranch, elseBranch } = splitOnTopLevelElse(rawContent, evaluator);
  const chosen = !isFalsy ? thenBranch : elseBranch;
  if (chosen === undefined) return '';
  const result = evaluator.evaluateNested(chosen, globalOffset);
  return flags.includes('#') ? result : trimScopedContent(result);
}
