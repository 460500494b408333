/**
 * A step-bounded backtracking matcher for the JavaScript patterns RE2 cannot run (lookahead, backreferences,
 * lookbehind with captures). It follows ECMAScript's matching semantics (ordered alternation, greedy/lazy
 * quantifiers, an empty iteration ends a loop, captures reset on each iteration, lookbehind matched right
 * to left, atomic lookaround) in plain synchronous code, and counts every instruction it executes: past the
 * budget the search is abandoned and reported as 'aborted'. It never uses V8 `RegExp` on the user pattern
 * and never recurses per character (explicit backtrack stack), so neither time nor stack depth can run away.
 */

export type GuardedSearchResult = number[] | null | 'aborted';

export interface GuardedProgram {
  /** First match starting at or after `from`: flat spans [start0, end0, start1, end1, …] per group (-1 = unset). */
  search(text: string, from: number, budget?: GuardBudget): GuardedSearchResult;
}

/** Steps left for one public call (test, firstMatch, matchAll, replace). */
export interface GuardBudget {
  steps: number;
}

/** Base steps per call, plus a per-character allowance so long texts with benign patterns still finish. */
export const GUARD_BASE_STEPS = 100_000;
export const GUARD_STEPS_PER_CHAR = 30;
const MAX_PROGRAM_SIZE = 20_000;

export function guardBudgetFor(text: string): GuardBudget {
  return { steps: GUARD_BASE_STEPS + GUARD_STEPS_PER_CHAR * text.length };
}

type Node =
  | { t: 'char'; cp: number }
  | { t: 'set'; test: (cp: number) => boolean }
  | { t: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { t: 'group'; index: number | null; body: Node }
  | { t: 'look'; behind: boolean; negate: boolean; body: Node }
  | { t: 'backref'; index: number; name?: string }
  | { t: 'alt'; alts: Node[] }
  | { t: 'seq'; items: Node[] }
  | { t: 'repeat'; min: number; max: number; greedy: boolean; body: Node };

class Unsupported extends Error {}

const isLineTerminator = (cp: number) => cp === 0x0a || cp === 0x0d || cp === 0x2028 || cp === 0x2029;
const isDigit = (cp: number) => cp >= 0x30 && cp <= 0x39;
const isWord = (cp: number) =>
  (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || isDigit(cp) || cp === 0x5f;
const isSpace = (cp: number) =>
  (cp >= 0x09 && cp <= 0x0d) ||
  cp === 0x20 ||
  cp === 0xa0 ||
  cp === 0x1680 ||
  (cp >= 0x2000 && cp <= 0x200a) ||
  cp === 0x2028 ||
  cp === 0x2029 ||
  cp === 0x202f ||
  cp === 0x205f ||
  cp === 0x3000 ||
  cp === 0xfeff;

/** JS Canonicalize for `i` (non-unicode): upper-case mapping unless it leaves one unit or maps into ASCII. */
function canonicalize(cp: number): number {
  if (cp < 0x61 || (cp > 0x7a && cp < 0xb5)) return cp;
  if (cp <= 0x7a) return cp - 32;
  const upper = String.fromCodePoint(cp).toUpperCase();
  const code = upper.codePointAt(0) as number;
  if (upper.length !== String.fromCodePoint(code).length) return cp;
  if (cp >= 128 && code < 128) return cp;
  return code;
}

class Parser {
  private i = 0;
  groupCount = 0;
  readonly names = new Map<string, number>();
  private readonly unicode: boolean;
  private readonly ignoreCase: boolean;
  private readonly dotAll: boolean;
  private readonly totalGroups: number;
  private readonly hasNames: boolean;

  constructor(
    private readonly src: string,
    flags: string,
  ) {
    this.unicode = flags.includes('u');
    this.ignoreCase = flags.includes('i');
    this.dotAll = flags.includes('s');
    const counted = countGroups(src);
    this.totalGroups = counted.count;
    this.hasNames = counted.named;
  }

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.src.length) throw new Unsupported(`unexpected ${this.src[this.i]} at ${this.i}`);
    return node;
  }

  private alternation(): Node {
    const alts = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      alts.push(this.sequence());
    }
    return alts.length === 1 ? alts[0] : { t: 'alt', alts };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      items.push(this.term());
    }
    return { t: 'seq', items };
  }

  private term(): Node {
    const atom = this.atom();
    const c = this.src[this.i];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const q = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!q) return atom;
      min = Number(q[1]);
      max = q[2] === undefined ? min : q[3] === '' ? Infinity : Number(q[3]);
      this.i += q[0].length - 1;
    } else return atom;
    this.i++;
    let greedy = true;
    if (this.src[this.i] === '?') {
      greedy = false;
      this.i++;
    }
    return { t: 'repeat', min, max, greedy, body: atom };
  }

  private readCodePoint(): number {
    const cp = this.unicode ? (this.src.codePointAt(this.i) as number) : this.src.charCodeAt(this.i);
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private atom(): Node {
    const c = this.src[this.i];
    switch (c) {
      case '^':
      case '$':
        this.i++;
        return { t: 'assert', kind: c };
      case '.': {
        this.i++;
        const dotAll = this.dotAll;
        return { t: 'set', test: (cp) => dotAll || !isLineTerminator(cp) };
      }
      case '(':
        return this.group();
      case '[':
        return this.charClass();
      case '\\':
        return this.atomEscape();
      default:
        return this.literal(this.readCodePoint());
    }
  }

  private literal(cp: number): Node {
    if (!this.ignoreCase) return { t: 'char', cp };
    const canon = canonicalize(cp);
    return { t: 'set', test: (x) => canonicalize(x) === canon };
  }

  private group(): Node {
    const src = this.src;
    this.i++;
    let node: Node;
    if (src[this.i] !== '?') {
      const index = ++this.groupCount;
      node = { t: 'group', index, body: this.alternation() };
    } else if (src.startsWith('?:', this.i)) {
      this.i += 2;
      node = { t: 'group', index: null, body: this.alternation() };
    } else if (src.startsWith('?=', this.i) || src.startsWith('?!', this.i)) {
      const negate = src[this.i + 1] === '!';
      this.i += 2;
      node = { t: 'look', behind: false, negate, body: this.alternation() };
    } else if (src.startsWith('?<=', this.i) || src.startsWith('?<!', this.i)) {
      const negate = src[this.i + 2] === '!';
      this.i += 3;
      node = { t: 'look', behind: true, negate, body: this.alternation() };
    } else if (src.startsWith('?<', this.i)) {
      const close = src.indexOf('>', this.i);
      const name = src.slice(this.i + 2, close);
      this.i = close + 1;
      const index = ++this.groupCount;
      this.names.set(name, index);
      node = { t: 'group', index, body: this.alternation() };
    } else {
      throw new Unsupported('inline modifiers are not supported by the guarded engine');
    }
    if (src[this.i] !== ')') throw new Unsupported('unterminated group');
    this.i++;
    return node;
  }

  private atomEscape(): Node {
    const c = this.src[this.i + 1];
    if (c === 'b' || c === 'B') {
      this.i += 2;
      return { t: 'assert', kind: c };
    }
    if (c >= '1' && c <= '9') {
      const digits = /^\d+/.exec(this.src.slice(this.i + 1))?.[0] ?? c;
      const n = Number(digits);
      if (n <= this.totalGroups) {
        this.i += 1 + digits.length;
        return { t: 'backref', index: n };
      }
    }
    if (c === 'k' && (this.hasNames || this.unicode)) {
      const close = this.src.indexOf('>', this.i);
      const name = this.src.slice(this.i + 3, close);
      this.i = close + 1;
      return { t: 'backref', index: -1, name };
    }
    const escaped = this.classEscape(false);
    return typeof escaped === 'number' ? this.literal(escaped) : escaped;
  }

  /** An escape at `this.i` (a backslash): a code point, or a set node for \d \w \s etc. */
  private classEscape(inClass: boolean): number | Node {
    const src = this.src;
    const c = src[this.i + 1];
    this.i += 2;
    switch (c) {
      case 'd':
        return { t: 'set', test: isDigit };
      case 'D':
        return { t: 'set', test: (x) => !isDigit(x) };
      case 'w':
        return { t: 'set', test: isWord };
      case 'W':
        return { t: 'set', test: (x) => !isWord(x) };
      case 's':
        return { t: 'set', test: isSpace };
      case 'S':
        return { t: 'set', test: (x) => !isSpace(x) };
      case 'n':
        return 0x0a;
      case 'r':
        return 0x0d;
      case 't':
        return 0x09;
      case 'f':
        return 0x0c;
      case 'v':
        return 0x0b;
      case 'b':
        return 0x08; // only reached inside a class
      case 'c': {
        const letter = src[this.i];
        if (letter !== undefined && /[A-Za-z]/.test(letter)) {
          this.i++;
          return letter.charCodeAt(0) % 32;
        }
        this.i--; // `\c` not followed by a letter: a literal backslash, then `c` is read next
        return 0x5c;
      }
      case 'x': {
        const h = src.slice(this.i, this.i + 2);
        if (/^[0-9a-fA-F]{2}$/.test(h)) {
          this.i += 2;
          return parseInt(h, 16);
        }
        return 0x78;
      }
      case 'u': {
        if (this.unicode && src[this.i] === '{') {
          const close = src.indexOf('}', this.i);
          const cp = parseInt(src.slice(this.i + 1, close), 16);
          this.i = close + 1;
          return cp;
        }
        const h = src.slice(this.i, this.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) return 0x75;
        this.i += 4;
        const unit = parseInt(h, 16);
        if (
          this.unicode &&
          unit >= 0xd800 &&
          unit <= 0xdbff &&
          /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(src.slice(this.i))
        ) {
          const low = parseInt(src.slice(this.i + 2, this.i + 6), 16);
          this.i += 6;
          return (unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        }
        return unit;
      }
      case 'p':
      case 'P':
        if (this.unicode) throw new Unsupported('\\p{…} is not supported by the guarded engine');
        return c.charCodeAt(0);
      default:
        break;
    }
    if (c === undefined) return 0x5c;
    if (c >= '0' && c <= '9') {
      if (c === '8' || c === '9') return c.charCodeAt(0);
      if (!inClass && c !== '0') {
        // a decimal escape above the group count is a legacy octal escape
      }
      const octal = /^[0-7]{1,3}/.exec(src.slice(this.i - 1))?.[0] ?? '0';
      const value = parseInt(octal, 8) > 0o377 ? octal.slice(0, 2) : octal;
      this.i += value.length - 1;
      return parseInt(value, 8);
    }
    this.i -= 1;
    return this.readCodePoint();
  }

  private charClass(): Node {
    this.i++;
    let negate = false;
    if (this.src[this.i] === '^') {
      negate = true;
      this.i++;
    }
    const ranges: [number, number][] = [];
    const sets: ((cp: number) => boolean)[] = [];
    const readAtom = (): number | Node => {
      if (this.src[this.i] === '\\') return this.classEscape(true);
      return this.readCodePoint();
    };
    while (this.i < this.src.length && this.src[this.i] !== ']') {
      const first = readAtom();
      if (
        typeof first === 'number' &&
        this.src[this.i] === '-' &&
        this.src[this.i + 1] !== ']' &&
        this.i + 1 < this.src.length
      ) {
        this.i++;
        const second = readAtom();
        if (typeof second === 'number') {
          ranges.push([first, second]);
          continue;
        }
        ranges.push([first, first], [0x2d, 0x2d]);
        sets.push((second as { test: (cp: number) => boolean }).test);
        continue;
      }
      if (typeof first === 'number') ranges.push([first, first]);
      else sets.push((first as { test: (cp: number) => boolean }).test);
    }
    if (this.src[this.i] !== ']') throw new Unsupported('unterminated class');
    this.i++;
    const raw = (cp: number) => ranges.some(([lo, hi]) => cp >= lo && cp <= hi) || sets.some((f) => f(cp));
    const ignoreCase = this.ignoreCase;
    const member = ignoreCase
      ? (cp: number) => {
          if (raw(cp)) return true;
          const ch = String.fromCodePoint(cp);
          const lower = ch.toLowerCase().codePointAt(0) as number;
          const upper = ch.toUpperCase().codePointAt(0) as number;
          return (lower !== cp && raw(lower)) || (upper !== cp && raw(upper));
        }
      : raw;
    return { t: 'set', test: negate ? (cp) => !member(cp) : member };
  }
}

function countGroups(src: string): { count: number; named: boolean } {
  let count = 0;
  let named = false;
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') {
      if (src[i + 1] !== '?') count++;
      else if (src[i + 2] === '<' && src[i + 3] !== '=' && src[i + 3] !== '!') {
        count++;
        named = true;
      }
    }
  }
  return { count, named };
}

type Inst =
  | { op: 'char'; cp: number; back: boolean }
  | { op: 'set'; test: (cp: number) => boolean; back: boolean }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'save'; slot: number }
  | { op: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { op: 'backref'; group: number; back: boolean }
  | { op: 'look'; start: number; behind: boolean; negate: boolean }
  | { op: 'mark'; reg: number }
  | { op: 'check'; reg: number }
  | { op: 'reset'; from: number; to: number }
  | { op: 'match' };

class Compiler {
  readonly prog: Inst[] = [];
  registers = 0;

  constructor(
    private readonly slotsForGroups: number,
    private readonly names: Map<string, number>,
  ) {}

  private emit(inst: Inst): number {
    if (this.prog.length >= MAX_PROGRAM_SIZE)
      throw new Unsupported('pattern too large for the guarded engine');
    this.prog.push(inst);
    return this.prog.length - 1;
  }

  /** Highest capture index inside a node, for resets: [lowest, highest] or null. */
  private groupRange(node: Node): [number, number] | null {
    let lo = Infinity;
    let hi = -Infinity;
    const walk = (n: Node) => {
      if (n.t === 'group') {
        if (n.index !== null) {
          lo = Math.min(lo, n.index);
          hi = Math.max(hi, n.index);
        }
        walk(n.body);
      } else if (n.t === 'look' || n.t === 'repeat') walk(n.body);
      else if (n.t === 'alt') n.alts.forEach(walk);
      else if (n.t === 'seq') n.items.forEach(walk);
    };
    walk(node);
    return lo === Infinity ? null : [lo, hi];
  }

  compile(node: Node, back: boolean): void {
    switch (node.t) {
      case 'char':
        this.emit({ op: 'char', cp: node.cp, back });
        return;
      case 'set':
        this.emit({ op: 'set', test: node.test, back });
        return;
      case 'assert':
        this.emit({ op: 'assert', kind: node.kind });
        return;
      case 'backref': {
        const group = node.name !== undefined ? (this.names.get(node.name) ?? -1) : node.index;
        if (group < 0) throw new Unsupported(`unknown group name ${node.name}`);
        this.emit({ op: 'backref', group, back });
        return;
      }
      case 'group':
        if (node.index === null) return this.compile(node.body, back);
        // Going backwards the end is found first.
        this.emit({ op: 'save', slot: 2 * node.index + (back ? 1 : 0) });
        this.compile(node.body, back);
        this.emit({ op: 'save', slot: 2 * node.index + (back ? 0 : 1) });
        return;
      case 'look': {
        const at = this.emit({ op: 'look', start: 0, behind: node.behind, negate: node.negate });
        const skip = this.emit({ op: 'jmp', x: 0 });
        const start = this.prog.length;
        this.compile(node.body, node.behind);
        this.emit({ op: 'match' });
        (this.prog[at] as { start: number }).start = start;
        (this.prog[skip] as { x: number }).x = this.prog.length;
        return;
      }
      case 'seq': {
        const items = back ? [...node.items].reverse() : node.items;
        for (const item of items) this.compile(item, back);
        return;
      }
      case 'alt': {
        const jumps: number[] = [];
        node.alts.forEach((alt, k) => {
          if (k < node.alts.length - 1) {
            const split = this.emit({ op: 'split', x: 0, y: 0 });
            (this.prog[split] as { x: number }).x = this.prog.length;
            this.compile(alt, back);
            jumps.push(this.emit({ op: 'jmp', x: 0 }));
            (this.prog[split] as { y: number }).y = this.prog.length;
          } else this.compile(alt, back);
        });
        for (const j of jumps) (this.prog[j] as { x: number }).x = this.prog.length;
        return;
      }
      case 'repeat':
        return this.repeat(node, back);
    }
  }

  private iteration(node: Node, back: boolean, checkEmpty: boolean): void {
    const range = this.groupRange(node);
    const reg = checkEmpty ? this.slotsForGroups + this.registers++ : -1;
    if (checkEmpty) this.emit({ op: 'mark', reg });
    if (range) this.emit({ op: 'reset', from: 2 * range[0], to: 2 * range[1] + 1 });
    this.compile(node, back);
    if (checkEmpty) this.emit({ op: 'check', reg });
  }

  private repeat(node: Extract<Node, { t: 'repeat' }>, back: boolean): void {
    const { min, max, greedy, body } = node;
    if (min > 1000 || (max !== Infinity && max > 1000)) throw new Unsupported('repeat count over 1000');
    for (let k = 0; k < min; k++) this.iteration(body, back, false);
    if (max === Infinity) {
      const loop = this.emit({ op: 'split', x: 0, y: 0 });
      const bodyStart = this.prog.length;
      this.iteration(body, back, true);
      this.emit({ op: 'jmp', x: loop });
      const exit = this.prog.length;
      const split = this.prog[loop] as { x: number; y: number };
      [split.x, split.y] = greedy ? [bodyStart, exit] : [exit, bodyStart];
      return;
    }
    const splits: number[] = [];
    for (let k = min; k < max; k++) {
      const split = this.emit({ op: 'split', x: 0, y: 0 });
      splits.push(split);
      const bodyStart = this.prog.length;
      this.iteration(body, back, true);
      (this.prog[split] as { x: number }).x = bodyStart;
    }
    const exit = this.prog.length;
    for (const s of splits) {
      const split = this.prog[s] as { x: number; y: number };
      [split.x, split.y] = greedy ? [split.x, exit] : [exit, split.x];
    }
  }
}

const ABORT = -2;

class Program implements GuardedProgram {
  constructor(
    private readonly prog: Inst[],
    private readonly slotCount: number,
    private readonly groupSlots: number,
    private readonly flags: { unicode: boolean; ignoreCase: boolean; multiline: boolean },
  ) {}

  search(text: string, from: number, budget: GuardBudget = guardBudgetFor(text)): GuardedSearchResult {
    // A failed run undoes every slot it set (each write is on the backtrack stack), so the slots are all
    // unset again at the next start: refilling them per start cost O(groups) per character, uncounted
    // (2,000 groups on 200,000 characters: 3.4 s).
    const slots = new Array<number>(this.slotCount).fill(-1);
    for (let start = from; start <= text.length; start++) {
      const end = this.run(0, start, slots, text, budget);
      if (end === ABORT) return 'aborted';
      if (end >= 0) {
        const spans = slots.slice(0, this.groupSlots);
        spans[0] = start;
        spans[1] = end;
        return spans;
      }
      if (this.flags.unicode) {
        const code = text.charCodeAt(start);
        if (code >= 0xd800 && code <= 0xdbff && start + 1 < text.length) start++;
      }
    }
    return null;
  }

  private readForward(text: string, pos: number): [number, number] {
    if (pos >= text.length) return [-1, 0];
    if (this.flags.unicode) {
      const cp = text.codePointAt(pos) as number;
      return [cp, cp > 0xffff ? 2 : 1];
    }
    return [text.charCodeAt(pos), 1];
  }

  private readBackward(text: string, pos: number): [number, number] {
    if (pos <= 0) return [-1, 0];
    const unit = text.charCodeAt(pos - 1);
    if (this.flags.unicode && unit >= 0xdc00 && unit <= 0xdfff && pos >= 2) {
      const high = text.charCodeAt(pos - 2);
      if (high >= 0xd800 && high <= 0xdbff) return [(high - 0xd800) * 0x400 + (unit - 0xdc00) + 0x10000, 2];
    }
    return [unit, 1];
  }

  /** Runs from `pc` at `pos`; returns the end position, -1 for no match, ABORT when the budget ran out. */
  private run(pc: number, pos: number, slots: number[], text: string, budget: GuardBudget): number {
    const prog = this.prog;
    // Backtrack stack: triples (kind, a, b). kind 0 = resume at pc a, pos b; kind 1 = restore slots[a] = b.
    const stack: number[] = [];
    const { ignoreCase, multiline } = this.flags;
    for (;;) {
      if (--budget.steps < 0) return ABORT;
      const inst = prog[pc];
      let ok = true;
      switch (inst.op) {
        case 'char':
        case 'set': {
          const [cp, width] = inst.back ? this.readBackward(text, pos) : this.readForward(text, pos);
          if (cp < 0) ok = false;
          else if (inst.op === 'char')
            ok = ignoreCase ? canonicalize(cp) === canonicalize(inst.cp) : cp === inst.cp;
          else ok = inst.test(cp);
          if (ok) {
            pos += inst.back ? -width : width;
            pc++;
          }
          break;
        }
        case 'split':
          stack.push(0, inst.y, pos);
          pc = inst.x;
          break;
        case 'jmp':
          pc = inst.x;
          break;
        case 'save':
        case 'mark':
          {
            const slot = inst.op === 'save' ? inst.slot : inst.reg;
            stack.push(1, slot, slots[slot]);
            slots[slot] = pos;
            pc++;
          }
          break;
        case 'check':
          ok = slots[inst.reg] !== pos;
          if (ok) pc++;
          break;
        case 'reset':
          // A step per 16 slots reset (none below 16, so small patterns keep their budget): a star over
          // 1,000 optional groups reset 2,000 slots per iteration for one step.
          budget.steps -= (inst.to - inst.from) >> 4;
          for (let s = inst.from; s <= inst.to; s++) {
            if (slots[s] !== -1) {
              stack.push(1, s, slots[s]);
              slots[s] = -1;
            }
          }
          pc++;
          break;
        case 'assert':
          ok = this.assert(inst.kind, text, pos, multiline);
          if (ok) pc++;
          break;
        case 'backref': {
          const s = slots[2 * inst.group];
          const e = slots[2 * inst.group + 1];
          if (s < 0 || e < 0) {
            pc++;
            break;
          }
          const len = e - s;
          const at = inst.back ? pos - len : pos;
          if (at < 0 || at + len > text.length) ok = false;
          else {
            for (let k = 0; k < len && ok; k++) {
              const a = text.charCodeAt(s + k);
              const b = text.charCodeAt(at + k);
              ok = ignoreCase ? canonicalize(a) === canonicalize(b) : a === b;
            }
          }
          if (ok) {
            pos = inst.back ? pos - len : pos + len;
            pc++;
          }
          break;
        }
        case 'look': {
          // Copying (and comparing) the slots: a step per 16 (none below 16). With 2,000 groups a lookahead
          // at each of 200,000 starts took 1.6 s within the budget when it was one step.
          budget.steps -= slots.length >> 4;
          const inner = slots.slice();
          const end = this.run(inst.start, pos, inner, text, budget);
          if (end === ABORT) return ABORT;
          const matched = end >= 0;
          ok = matched !== inst.negate;
          if (ok && matched) {
            for (let s = 2; s < inner.length; s++) {
              if (inner[s] !== slots[s]) {
                stack.push(1, s, slots[s]);
                slots[s] = inner[s];
              }
            }
          }
          if (ok) pc = (prog[pc + 1] as { x: number }).x;
          break;
        }
        case 'match':
          return pos;
      }
      if (ok) continue;
      // Backtrack.
      for (;;) {
        if (stack.length === 0) return -1;
        const b = stack.pop() as number;
        const a = stack.pop() as number;
        const kind = stack.pop() as number;
        if (kind === 1) slots[a] = b;
        else {
          pc = a;
          pos = b;
          break;
        }
      }
    }
  }

  private assert(kind: '^' | '$' | 'b' | 'B', text: string, pos: number, multiline: boolean): boolean {
    switch (kind) {
      case '^':
        return pos === 0 || (multiline && isLineTerminator(text.charCodeAt(pos - 1)));
      case '$':
        return pos === text.length || (multiline && isLineTerminator(text.charCodeAt(pos)));
      default: {
        const before = pos > 0 && isWord(text.charCodeAt(pos - 1));
        const after = pos < text.length && isWord(text.charCodeAt(pos));
        return (before !== after) === (kind === 'b');
      }
    }
  }
}

/** Compiles a (JS-valid) pattern for the guarded engine; patterns it does not cover are refused. */
export function compileGuarded(
  source: string,
  flags: string,
): { ok: true; program: GuardedProgram } | { ok: false; message: string } {
  try {
    const parser = new Parser(source, flags);
    const ast = parser.parse();
    const slotsForGroups = 2 * (parser.groupCount + 1);
    const compiler = new Compiler(slotsForGroups, parser.names);
    compiler.compile(ast, false);
    compiler.prog.push({ op: 'match' });
    const program = new Program(compiler.prog, slotsForGroups + compiler.registers, slotsForGroups, {
      unicode: flags.includes('u'),
      ignoreCase: flags.includes('i'),
      multiline: flags.includes('m'),
    });
    return { ok: true, program };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
