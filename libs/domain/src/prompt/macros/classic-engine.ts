/**
 * ST 1.18's classic macro engine (macros.js `evaluateMacros`, reference §g "Evaluation order"): a fixed
 * list of regex replacements run once each, in order — legacy angle tags, `{{roll}}`, instruct macros,
 * variable macros, `{{newline}}`/`{{trim}}`/`{{noop}}`/`{{input}}`, the environment values (card fields
 * before `{{user}}`/`{{char}}` so names inside descriptions resolve), then the post-env built-ins (limits,
 * chat, `{{reverse:…}}`, comments, time, outlets, `{{timeDiff}}`, `{{banned}}`, `{{random}}`, `{{pick}}`).
 * No nesting beyond what this order gives; unknown macros stay as written. The loop stops as soon as the
 * text holds no `{{` (angle tags excepted).
 */
import { MacroRuntime, MACRO_LIMITS } from './runtime';
import { linearReplace } from './linear-regex';
import { escapeRegex, getStringHash, splitLegacyList } from './st-compat';

type Replacer = (match: string, ...groups: string[]) => string | number;

interface Rule {
  name: string;
  regex: RegExp;
  replace: Replacer;
  /** Lower-case literal the text must contain for the rule to run. */
  needle: string | null;
  /** Run on the linear-time engine (patterns with quantifiers). */
  linear: boolean;
}

/** `getInstructMacros(env)` keys; with instruct mode off (chat completion) each resolves to ''. */
const INSTRUCT_KEYS = [
  'instructStoryStringPrefix',
  'instructStoryStringSuffix',
  'instructInput|instructUserPrefix',
  'instructUserSuffix',
  'instructOutput|instructAssistantPrefix',
  'instructSeparator|instructAssistantSuffix',
  'instructSystemPrefix',
  'instructSystemSuffix',
  'instructFirstOutput|instructFirstAssistantPrefix',
  'instructLastOutput|instructLastAssistantPrefix',
  'instructStop',
  'instructUserFiller',
  'instructSystemInstructionPrefix',
  'instructFirstInput|instructFirstUserPrefix',
  'instructLastInput|instructLastUserPrefix',
  'systemPrompt',
  'defaultSystemPrompt|instructSystem|instructSystemPrompt',
  'chatSeparator',
  'chatStart',
];

/** All instruct keys in one pass: with instruct mode off every one becomes '', so their order is moot. */
const INSTRUCT_PATTERN = new RegExp(`{{(${INSTRUCT_KEYS.join('|')})}}`, 'gi');

const shapeCache = new Map<string, { needle: string | null; linear: boolean }>();

/** The literal a pattern needs (to skip it cheaply) and whether it has quantifiers (run it linearly). */
function ruleShape(regex: RegExp): { needle: string | null; linear: boolean } {
  let shape = shapeCache.get(regex.source);
  if (!shape) {
    const source = regex.source.replace(/^\(\?:\\r\?\\n\)\*/, '');
    let literal = /^(?:\\[^a-zA-Z0-9]|[^\\[(.*+?|^$])*/.exec(source)![0];
    if (/^[?*]/.test(source.slice(literal.length))) literal = literal.slice(0, -1);
    const needle = literal.replace(/\\(.)/g, '$1').toLowerCase();
    shape = { needle: needle.length >= 2 ? needle : null, linear: /[*+?]/.test(regex.source) };
    shapeCache.set(regex.source, shape);
  }
  return shape;
}

const envPatternCache = new Map<string, RegExp>();

function envPattern(name: string): RegExp {
  let pattern = envPatternCache.get(name);
  if (!pattern) {
    pattern = new RegExp(`{{${escapeRegex(name)}}}`, 'gi');
    if (envPatternCache.size < 1000) envPatternCache.set(name, pattern);
  }
  return pattern;
}

export interface ClassicOptions {
  original?: string;
  dynamicMacros: Map<string, string>;
  /** ST `postProcessFn`: applied to each replacement's value. */
  escapeValue?: (value: string) => string;
}

export function evaluateClassic(rt: MacroRuntime, input: string, options: ClassicOptions): string {
  if (!input) return '';
  let content = input;
  const rawContent = input;
  const { overlay } = rt;
  const seen = (name: string, fn: Replacer): Replacer => {
    return (...args) => {
      rt.use(name);
      return fn(...(args as [string, ...string[]]));
    };
  };
  const rule = (name: string, regex: RegExp, replace: Replacer): Rule => ({
    name,
    regex,
    replace: seen(name, replace),
    ...ruleShape(regex),
  });

  const preEnv: Rule[] = [
    rule('user', /<USER>/gi, () => rt.user),
    rule('char', /<BOT>/gi, () => rt.char),
    rule('char', /<CHAR>/gi, () => rt.char),
    rule('group', /<CHARIFNOTGROUP>/gi, () => rt.group),
    rule('group', /<GROUP>/gi, () => rt.group),
    rule('roll', /{{roll[ : ]([^}]+)}}/gi, (_m, formula) => rt.roll(formula)),
    {
      name: 'instruct',
      regex: INSTRUCT_PATTERN,
      ...ruleShape(INSTRUCT_PATTERN),
      replace: (_m, key) => {
        rt.use(key);
        return '';
      },
    },
    rule('setvar', /{{setvar::([^:]+)::([^}]*)}}/gi, (_m, name, value) => {
      overlay.set('local', name.trim(), value, 'setvar');
      return '';
    }),
    rule('addvar', /{{addvar::([^:]+)::([^}]+)}}/gi, (_m, name, value) => {
      overlay.add('local', name.trim(), value, 'addvar');
      return '';
    }),
    rule('incvar', /{{incvar::([^}]+)}}/gi, (_m, name) =>
      overlay.add('local', name.trim(), 1, 'incvar', 'inc'),
    ),
    rule('decvar', /{{decvar::([^}]+)}}/gi, (_m, name) =>
      overlay.add('local', name.trim(), -1, 'decvar', 'dec'),
    ),
    rule('getvar', /{{getvar::([^}]+)}}/gi, (_m, name) => overlay.get('local', name.trim())),
    rule('setglobalvar', /{{setglobalvar::([^:]+)::([^}]*)}}/gi, (_m, name, value) => {
      overlay.set('global', name.trim(), value, 'setglobalvar');
      return '';
    }),
    rule('addglobalvar', /{{addglobalvar::([^:]+)::([^}]+)}}/gi, (_m, name, value) => {
      overlay.add('global', name.trim(), value, 'addglobalvar');
      return '';
    }),
    rule('incglobalvar', /{{incglobalvar::([^}]+)}}/gi, (_m, name) =>
      overlay.add('global', name.trim(), 1, 'incglobalvar', 'inc'),
    ),
    rule('decglobalvar', /{{decglobalvar::([^}]+)}}/gi, (_m, name) =>
      overlay.add('global', name.trim(), -1, 'decglobalvar', 'dec'),
    ),
    rule('getglobalvar', /{{getglobalvar::([^}]+)}}/gi, (_m, name) => overlay.get('global', name.trim())),
    rule('newline', /{{newline}}/gi, () => '\n'),
    rule('trim', /(?:\r?\n)*{{trim}}(?:\r?\n)*/gi, () => ''),
    rule('noop', /{{noop}}/gi, () => ''),
    rule('input', /{{input}}/gi, () => rt.context.input ?? ''),
  ];

  // substituteParamsLegacy's environment, in its key order.
  const character = rt.context.character ?? {};
  const env: [string, () => string][] = [];
  if (typeof options.original === 'string') {
    let taken = false;
    const original = options.original;
    env.push([
      'original',
      () => {
        if (taken) return '';
        taken = true;
        return original;
      },
    ]);
  }
  if (rt.cardFieldsEnabled) {
    env.push(
      ['charPrompt', () => rt.card('systemPrompt')],
      // `environment.charInstruction = environment.charJailbreak = …` creates charJailbreak first
      ['charJailbreak', () => rt.card('postHistoryInstructions')],
      ['charInstruction', () => rt.card('postHistoryInstructions')],
      ['description', () => rt.card('description')],
      ['personality', () => rt.card('personality')],
      ['scenario', () => rt.card('scenario')],
      ['persona', () => rt.card('persona')],
      ['mesExamples', () => rt.mesExamples],
      ['mesExamplesRaw', () => rt.card('mesExamples')],
      ['charVersion', () => character.version ?? ''],
      ['char_version', () => character.version ?? ''],
      ['charDepthPrompt', () => rt.card('depthPrompt')],
      ['creatorNotes', () => rt.card('creatorNotes')],
    );
  }
  env.push(
    ['user', () => rt.user],
    ['char', () => rt.char],
    ['charIfNotGroup', () => rt.group],
    ['group', () => rt.group],
    ['groupNotMuted', () => rt.groupNotMuted],
    ['notChar', () => rt.notChar],
    ['model', () => rt.context.model ?? ''],
  );
  for (const [key, value] of options.dynamicMacros) env.push([key, () => value]);
  env.push(['lastGenerationType', () => rt.context.generationType ?? ''], ['isMobile', () => 'false']);
  const envRules = env.map(([name, value]) => rule(name, envPattern(name), () => value()));

  const contentHash = getStringHash(rawContent);
  const postEnv: Rule[] = [
    rule('maxPrompt', /{{maxPrompt}}/gi, () => rt.limit('maxPrompt')),
    rule('maxPromptTokens', /{{maxPromptTokens}}/gi, () => rt.limit('maxPrompt')),
    rule('maxContext', /{{maxContext}}/gi, () => rt.limit('maxContext')),
    rule('maxContextTokens', /{{maxContextTokens}}/gi, () => rt.limit('maxContext')),
    rule('maxResponse', /{{maxResponse}}/gi, () => rt.limit('maxResponse')),
    rule('maxResponseTokens', /{{maxResponseTokens}}/gi, () => rt.limit('maxResponse')),
    rule('lastMessage', /{{lastMessage}}/gi, () => rt.lastMessage),
    rule('lastMessageId', /{{lastMessageId}}/gi, () => String(rt.lastMessageId() ?? '')),
    rule('lastUserMessage', /{{lastUserMessage}}/gi, () => rt.lastUserMessage),
    rule('lastCharMessage', /{{lastCharMessage}}/gi, () => rt.lastCharMessage),
    rule('firstIncludedMessageId', /{{firstIncludedMessageId}}/gi, () =>
      String(rt.context.firstIncludedMessageId ?? ''),
    ),
    rule('firstDisplayedMessageId', /{{firstDisplayedMessageId}}/gi, () =>
      String(rt.context.firstDisplayedMessageId ?? ''),
    ),
    rule('lastSwipeId', /{{lastSwipeId}}/gi, () => rt.lastSwipeId),
    rule('currentSwipeId', /{{currentSwipeId}}/gi, () => rt.currentSwipeId),
    rule('allChatRange', /{{allChatRange}}/gi, () => rt.allChatRange),
    rule('reverse', /{{reverse:(.+?)}}/gi, (_m, text) => Array.from(text).reverse().join('')),
    rule('//', /\{\{\/\/([\s\S]*?)\}\}/gm, () => ''),
    rule('time', /{{time}}/gi, () => rt.format('LT')),
    rule('date', /{{date}}/gi, () => rt.format('LL')),
    rule('weekday', /{{weekday}}/gi, () => rt.format('dddd')),
    rule('isotime', /{{isotime}}/gi, () => rt.format('HH:mm')),
    rule('isodate', /{{isodate}}/gi, () => rt.format('YYYY-MM-DD')),
    rule('datetimeformat', /{{datetimeformat +([^}]*)}}/gi, (_m, format) => rt.format(format)),
    rule('idle_duration', /{{idle_duration}}/gi, () => rt.idleDuration()),
    rule('time_utc', /{{time_UTC([-+]\d+)}}/gi, (_m, offset) =>
      rt.formatAtUtcOffset(Number.parseInt(offset, 10), 'LT'),
    ),
    rule('outlet', /{{outlet::(.+?)}}/gi, (_m, key) => rt.outlet(key.trim()) || ''),
    rule('timeDiff', /{{timeDiff::(.*?)::(.*?)}}/gi, (_m, a, b) => rt.timeDiff(a, b, false)),
    rule('banned', /{{banned "(.*)"}}/gi, () => ''),
    rule('random', /{{random\s?::?([^}]+)}}/gi, (_m, listString) => {
      const list = splitLegacyList(listString, false);
      return list.length === 0 ? '' : rt.randomItem(list);
    }),
  ];
  // {{pick}} needs the match offset, which `replace` passes after the groups.
  const pickRule: Rule = {
    name: 'pick',
    needle: '{{pick',
    linear: true,
    regex: /{{pick\s?::?([^}]+)}}/gi,
    replace: (...args: unknown[]) => {
      rt.use('pick');
      const listString = String(args[1]);
      const offset = Number(args[2]);
      const list = splitLegacyList(listString, false);
      return list.length === 0 ? '' : rt.pickItem(list, contentHash, offset, 'classic');
    },
  };

  let lower = content.toLowerCase();
  let lowerOf = content;
  for (const macro of [...preEnv, ...envRules, ...postEnv, pickRule]) {
    if (!content) break;
    if (!macro.regex.source.startsWith('<') && !content.includes('{{')) break;
    if (lowerOf !== content) {
      lower = content.toLowerCase();
      lowerOf = content;
    }
    if (macro.needle && !lower.includes(macro.needle)) continue;
    try {
      const escape = options.escapeValue;
      const replacer = escape
        ? (...args: unknown[]) => escape(String((macro.replace as (...a: unknown[]) => unknown)(...args)))
        : (...args: unknown[]) => String((macro.replace as (...a: unknown[]) => unknown)(...args));
      content = macro.linear
        ? linearReplace(content, macro.regex, replacer)
        : content.replace(macro.regex, replacer);
    } catch (error) {
      rt.warn(
        'macro_internal_error',
        `Macro "${macro.name}" could not be replaced: ${error instanceof Error ? error.message : String(error)}`,
        macro.name,
      );
    }
    if (content.length > MACRO_LIMITS.maxOutputLength) {
      rt.warn('macro_limit', `Macro output exceeds ${MACRO_LIMITS.maxOutputLength} characters; truncated.`);
      content = content.slice(0, MACRO_LIMITS.maxOutputLength);
    }
  }
  return content;
}

/** Every `{{name…}}` left in a classic result: macros the engine did not know. */
export function leftoverMacroNames(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(/{{\s*([a-zA-Z][\w-]*)/g)) names.add(match[1].toLowerCase());
  return [...names];
}
