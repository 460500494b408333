import {
  DomainError,
  notFound,
  parseBackupDocument,
  type BackupLogMode,
  type ParsedBackup,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { BackupJobView, Executor } from '@hearth/persistence';
import { backupRepository } from '@hearth/persistence';
import { checkBackupPromptSettings, type CheckedBackupPromptSettings } from './backup-prompt-settings';

/** Account backup export and restore (spec 3 "Backup"; docs/decisions.md "Backup"). */

export const BACKUP_CONTENT_TYPE = 'application/json; charset=utf-8';
export const BACKUP_FILE_EXTENSION = '.json';

export interface BackupExportOptions {
  include_operation_logs: BackupLogMode;
  include_vc_tags: boolean;
}

/** The body of `POST /backup/jobs/restore`: exactly one of the two. */
export interface BackupRestoreInput {
  document?: Record<string, unknown> | null;
  export_job_id?: string | null;
}

/** A checked backup: the domain's parse plus each session's checked prompt settings (null: no row). */
export interface ParsedAccountBackup extends ParsedBackup {
  /** By session, in `document.data.sessions` order. */
  prompt_settings: Array<CheckedBackupPromptSettings | null>;
}

/**
 * Every check of a restore, before anything is stored: the document's shape and references
 * (`parseBackupDocument`), then each session's prompt settings by the settings route's rules (they live
 * in this layer, so the domain parser leaves those values to this step). 400 `import_parse_error` with
 * `details.path` for the first problem.
 */
export function parseAccountBackup(input: unknown): ParsedAccountBackup {
  const parsed = parseBackupDocument(input);
  return {
    ...parsed,
    prompt_settings: parsed.document.data.sessions.map((session, i) =>
      session.prompt_settings
        ? checkBackupPromptSettings(session.prompt_settings, `$.data.sessions[${i}].prompt_settings`)
        : null,
    ),
  };
}

export type BackupJobKind = 'export_backup' | 'restore_backup';

export interface BackupJobAccepted {
  job_id: string;
  status: 'pending';
  job_kind: BackupJobKind;
}

export const backupJobNotFound = () => notFound('backup_job_not_found', 'Backup job not found');

/**
 * A backup job the caller may see: one of its account, created by this Client or seen by the account's
 * default Client; anything else is 404 `backup_job_not_found` (never its data).
 */
export async function requireBackupJob(db: Executor, actor: Actor, jobId: string): Promise<BackupJobView> {
  const job = await backupRepository.findJob(db, actor.accountId, jobId);
  if (!job || (!actor.clientIsDefault && job.created_by_client_id !== actor.clientId)) {
    throw backupJobNotFound();
  }
  return job;
}

/** `GET /backup/jobs/:id`. */
export interface BackupJobDetail {
  job_id: string;
  status: string;
  job_kind: string;
  options: unknown;
  output_expires_at: number | null;
  result: unknown;
  error: { code: string | null; message: string } | null;
  attempt_count: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export function toBackupJobDetail(job: BackupJobView): BackupJobDetail {
  return {
    job_id: job.id,
    status: job.status,
    job_kind: job.job_kind,
    options: job.options,
    output_expires_at: job.output_expires_at,
    result: job.result ?? null,
    error: job.last_error ? { code: job.last_error_code, message: job.last_error } : null,
    attempt_count: job.attempt_count,
    created_at: job.created_at,
    updated_at: job.updated_at,
    finished_at: job.finished_at,
  };
}

/** The download name of a backup file: `hearth-backup-<YYYY-MM-DD>` of its creation (UTC). */
export function backupFileName(createdAt: number): string {
  return `hearth-backup-${new Date(createdAt).toISOString().slice(0, 10)}`;
}

/**
 * Backups are the account's whole library and every session of every Project, and restored sessions get
 * Projects of their own: only the account's default Client may ask (403 `project_access_denied`).
 */
export function requireBackupClient(actor: Actor): void {
  if (!actor.clientIsDefault) {
    throw new DomainError(
      'project_access_denied',
      403,
      'Only the account’s default Client can export or restore a backup',
    );
  }
}
