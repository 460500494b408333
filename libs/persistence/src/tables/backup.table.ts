import type { Generated } from 'kysely';
import type { Json, NullableJson } from './core.table';

/** Backup export and restore tables (db/migrations/20261127120000_backup.ts). */

export type BackupJobKind = 'export_backup' | 'restore_backup';

/** The backup side of a `backup.transfer` ledger job (the `jobs` row of the same id holds the status). */
export interface BackupJobsTable {
  id: string;
  account_id: string;
  created_by_client_id: string;
  /** The caller, so the worker acts as them (operation logs, session placement). */
  actor: Json;
  job_kind: BackupJobKind;
  /** Export: `{include_operation_logs, include_vc_tags}`; restore: `{source, export_job_id}`. */
  options: Json;
  /** The backup document to restore; cleared when the restore succeeds. */
  input_text: string | null;
  /** True once a restore committed (a redelivery returns the stored result). */
  restored: Generated<boolean>;
  result: NullableJson;
  output_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The backup document an export job wrote. */
export interface BackupArtifactsTable {
  job_id: string;
  account_id: string;
  content: string;
  byte_count: number;
  created_at: number;
  expires_at: number;
}
