import {
  DomainError,
  importParseError,
  isPlainObject,
  type BackupPromptSettings,
  type JsonObject,
} from '@hearth/domain';
import type { SessionPromptSettingsRow } from '@hearth/persistence';
import {
  applyPromptSettingsPatch,
  checkPromptSettingsPut,
  storedSettings,
  type StoredPromptSettings,
} from '../prompt-settings/prompt-settings-rules';

/**
 * A session's prompt settings in an account backup (docs/decisions.md "Backup"): the stored row as
 * written, by column, and its check on restore by the settings route's own rules.
 */

/** A session's checked prompt settings, ready to be inserted for the restored session. */
export interface CheckedBackupPromptSettings {
  settings: StoredPromptSettings;
  version: number;
  updated_at: number;
  /** As in the document (a Client id or null); the restore keeps it only for a Client of its account. */
  updated_by: string | null;
}

/**
 * The backup record of a settings row: the written values (null columns and the objects' written keys),
 * `version`, `updated_at`, and `updated_by` unless it is the account's own id (the writer was the account
 * itself, which a backup never names, as with the logs' account actors).
 */
export function exportedPromptSettings(
  row: SessionPromptSettingsRow,
  accountId: string,
): BackupPromptSettings {
  const s = storedSettings(row);
  return {
    prompt_mode: s.prompt_mode,
    macro_engine: s.macro_engine,
    post_processing: s.post_processing,
    timezone: s.timezone,
    persona_position: s.persona_position,
    persona_depth: s.persona_depth,
    persona_role: s.persona_role,
    lorebook_settings: s.lorebook,
    authors_note: s.authors_note,
    version: row.version,
    updated_at: row.updated_at,
    updated_by: row.updated_by === accountId ? null : row.updated_by,
  };
}

/** The route's field name → the backup's column name (`lorebook.scanDepth` → `lorebook_settings.scanDepth`). */
const columnOf = (field: string) => field.replace(/^lorebook(?=\.|$)/, 'lorebook_settings');

/**
 * Checks a session's `prompt_settings` of a backup (`path`: `$.data.sessions[i].prompt_settings`) with
 * `checkPromptSettingsPut`, the route's rules: the record is read as a PUT that sets every column on a
 * session without settings, so null is "not set" (a null key of `lorebook_settings` / `authors_note` too)
 * and an unknown key inside those objects is refused as the route refuses it. The first problem is 400
 * `import_parse_error` with `details.path` (`...prompt_settings.lorebook_settings.scanDepth`).
 */
export function checkBackupPromptSettings(
  record: BackupPromptSettings,
  path: string,
): CheckedBackupPromptSettings {
  let patch;
  try {
    patch = checkPromptSettingsPut({
      prompt_mode: record.prompt_mode,
      macro_engine: record.macro_engine,
      post_processing: record.post_processing,
      timezone: record.timezone,
      persona_position: record.persona_position,
      persona_depth: record.persona_depth,
      persona_role: record.persona_role,
      lorebook: record.lorebook_settings,
      authors_note: record.authors_note,
    });
  } catch (error) {
    const first = validationProblem(error);
    if (first === null) throw error;
    const at = `${path}.${columnOf(first.field)}`;
    throw importParseError(`${at} ${first.problems.join(', ')}`, { path: at });
  }
  return {
    settings: applyPromptSettingsPatch(storedSettings(null), patch),
    version: record.version,
    updated_at: record.updated_at,
    updated_by: record.updated_by,
  };
}

function validationProblem(error: unknown): { field: string; problems: string[] } | null {
  if (!(error instanceof DomainError) || error.code !== 'validation_error') return null;
  const details = error.details as JsonObject | undefined;
  const fields = isPlainObject(details) && Array.isArray(details.fields) ? details.fields : [];
  const first = fields[0];
  return isPlainObject(first) && typeof first.field === 'string' && Array.isArray(first.problems)
    ? { field: first.field, problems: first.problems as string[] }
    : null;
}
