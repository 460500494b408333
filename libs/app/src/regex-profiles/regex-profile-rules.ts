import { compatReport, DomainError, type JsonObject, type RegexCompatReport } from '@hearth/domain';
import type { AssetVersionRow, RegexProfileRow } from '@hearth/persistence';

export const REGEX_PROFILE_DEFAULT_NAME = 'Unnamed Regex Profile';
/** `asset_versions.source_format` of regex profile versions: ST's regex script export. */
export const REGEX_SOURCE_FORMAT = 'st_regex_scripts';
export const REGEX_PROFILE_SOURCE = 'ext_frontend';
/** Names are cut to this length when taken from a script's `scriptName`. */
export const REGEX_PROFILE_NAME_MAX = 200;

export const regexProfileNotFound = () =>
  new DomainError('regex_profile_not_found', 404, 'Regex profile not found');

/**
 * The profile name when the import gives none: the first script's non-blank `scriptName` (trimmed, cut
 * to 200 characters), else `Unnamed Regex Profile`.
 */
export function defaultRegexProfileName(scripts: JsonObject[]): string {
  const first = scripts[0]?.scriptName;
  const trimmed = typeof first === 'string' ? first.trim() : '';
  return trimmed === '' ? REGEX_PROFILE_DEFAULT_NAME : [...trimmed].slice(0, REGEX_PROFILE_NAME_MAX).join('');
}

/** Script count and compat report of a script list, as stored on the head row. */
export function regexProfileStats(scripts: JsonObject[]): {
  script_count: number;
  compat_report: RegexCompatReport;
} {
  return { script_count: scripts.length, compat_report: compatReport(scripts) };
}

/** A regex profile with its latest version and that version's scripts. */
export interface RegexProfileDetail {
  profile: RegexProfileRow;
  version: AssetVersionRow;
  data: JsonObject[];
}

/** One version of a profile with its scripts. */
export interface RegexProfileVersionDetail {
  version: AssetVersionRow;
  data: JsonObject[];
}

/** The scripts of a stored version (always an array). */
export const asScripts = (data: unknown): JsonObject[] => (Array.isArray(data) ? (data as JsonObject[]) : []);
