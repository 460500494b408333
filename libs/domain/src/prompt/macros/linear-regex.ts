/**
 * Replace-all on a linear-time engine (re2js). ST's classic macro regexes (`{{timeDiff::(.*?)::(.*?)}}`,
 * `(?:\r?\n)*{{trim}}(?:\r?\n)*`, …) backtrack polynomially on hostile text in V8 — 100k newlines make the
 * trim pattern take tens of seconds — so every pattern with a quantifier runs here instead. Same match
 * semantics for these patterns (leftmost, greedy/lazy as written); the replacer gets String.replace args.
 */
import { RE2JS } from 're2js';

const cache = new Map<string, RE2JS>();

function compile(source: string, flags: string): RE2JS {
  const key = `${flags}/${source}`;
  let compiled = cache.get(key);
  if (!compiled) {
    let bits = 0;
    if (flags.includes('i')) bits |= RE2JS.CASE_INSENSITIVE;
    if (flags.includes('m')) bits |= RE2JS.MULTILINE;
    if (flags.includes('s')) bits |= RE2JS.DOTALL;
    compiled = RE2JS.compile(source, bits);
    cache.set(key, compiled);
  }
  return compiled;
}

export function linearReplace(
  text: string,
  pattern: RegExp,
  replacer: (...args: unknown[]) => string,
): string {
  return compile(pattern.source, pattern.flags).matcher(text).replaceAll(replacer);
}
