import { compileUserRegex, parseScriptRegex, userRegexCompileCost, UserRegexEngine } from './user-regex';

/**
 * Whether Hearth's engine can run a regex script's `findRegex` as written (external-formats.md §f;
 * performance-and-reliability.md: scripts RE2 cannot run are reported in `compat_report`
 * `unsupported_runtime_count`). Used by the codec's compat report and by `classifyRegexScripts`, so both
 * always agree. A pattern with macros substituted into it (`substituteRegex` 1 or 2) is only known at run
 * time, so it is not judged here.
 */
export type FindRegexSupport =
  | { supported: true; engine: UserRegexEngine | null }
  | { supported: false; reason: 'empty' | 'invalid' | 'unsupported'; message: string };

export function findRegexSupport(findRegex: string, substituteRegex: number): FindRegexSupport {
  if (findRegex === '') return { supported: false, reason: 'empty', message: 'findRegex is empty' };
  if (substituteRegex !== 0) return { supported: true, engine: null };
  const parsed = parseScriptRegex(findRegex);
  if (parsed === null) return { supported: false, reason: 'invalid', message: 'findRegex has no pattern' };
  const compiled = compileUserRegex(parsed.source, parsed.flags);
  if (!compiled.ok) return { supported: false, reason: compiled.reason, message: compiled.message };
  return { supported: true, engine: compiled.regex.engine };
}

/**
 * What judging a `findRegex` costs an import (the syntax check and the compat report's compilation), in
 * USER_REGEX_LIMITS units: at least its length (the import's syntax check reads it all), or its compile
 * cost. Counted whatever `substituteRegex` says: the runtime compiles those patterns too, every turn.
 */
export function findRegexImportUnits(findRegex: unknown): number {
  if (typeof findRegex !== 'string' || findRegex === '') return 0;
  const parsed = parseScriptRegex(findRegex);
  if (parsed === null) return findRegex.length;
  return Math.max(findRegex.length, userRegexCompileCost(parsed.source));
}
