import type { Kysely } from 'kysely';
import { runStatements } from './run-statements';

/**
 * Account backup export and restore (spec 3 "Backup"; docs/decisions.md "Backup"):
 *
 * - `backup_jobs`: the backup side of a `backup.transfer` ledger job (`jobs` row of the same id): kind
 *   (`export_backup` or `restore_backup`), options, the caller, the restore document text (cleared once
 *   restored) and the result.
 * - `backup_artifacts`: the backup document an export job wrote, with its expiry (checked at download).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    CREATE TABLE backup_jobs (
      id text PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      created_by_client_id text NOT NULL,
      actor jsonb NOT NULL,
      job_kind text NOT NULL CHECK (job_kind IN ('export_backup', 'restore_backup')),
      options jsonb NOT NULL DEFAULT '{}',
      input_text text,
      restored boolean NOT NULL DEFAULT false,
      result jsonb,
      output_expires_at bigint,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE INDEX backup_jobs_account ON backup_jobs (account_id, created_at);

    CREATE TABLE backup_artifacts (
      job_id text PRIMARY KEY REFERENCES backup_jobs (id) ON DELETE CASCADE,
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      content text NOT NULL,
      byte_count integer NOT NULL,
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL
    )
  `,
  );
}
