import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type {
  AssetKind,
  AssetVersionsTable,
  BackupArtifactsTable,
  BackupJobsTable,
  CharactersTable,
  JobStatus,
  OperationLogsTable,
  PresetsTable,
  RegexProfilesTable,
  SessionPromptSettingsTable,
  SessionsTable,
  UserCardsTable,
  VcTagsTable,
  WorldbookEntriesTable,
  WorldbooksTable,
} from './tables';

export type BackupJobRow = Selectable<BackupJobsTable>;
export type BackupArtifactRow = Selectable<BackupArtifactsTable>;

/** A backup job with the ledger fields of its `jobs` row. */
export interface BackupJobView extends BackupJobRow {
  status: JobStatus;
  last_error: string | null;
  last_error_code: string | null;
  attempt_count: number;
  finished_at: number | null;
}

/** An asset version with the JSON text kept as received (`asset_version_files`), when there is one. */
export type BackupAssetVersionRow = Selectable<AssetVersionsTable> & { file_body: string | null };

/** Rows per INSERT statement (Postgres takes at most 65,535 parameters per statement). */
const CHUNK = 500;

async function insertChunked<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

/** `column = ANY($1)`: one parameter whatever the number of ids. */
const anyOf = (column: string, ids: readonly string[]) =>
  sql<boolean>`${sql.ref(column)} = ANY(${[...ids]}::text[])`;

/**
 * Named queries of the account backup (db/migrations/20261127120000_backup.ts): whole-account reads of
 * an export, bulk writes of a restore (the caller's transaction), and the backup job rows. Every read
 * is scoped by account.
 */
export const backupRepository = {
  // ---- whole-account reads of an export ----

  async listCharacters(db: Executor, accountId: string): Promise<Array<Selectable<CharactersTable>>> {
    return db
      .selectFrom('characters')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async listPresets(db: Executor, accountId: string): Promise<Array<Selectable<PresetsTable>>> {
    return db
      .selectFrom('presets')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async listRegexProfiles(db: Executor, accountId: string): Promise<Array<Selectable<RegexProfilesTable>>> {
    return db
      .selectFrom('regex_profiles')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async listWorldbooks(db: Executor, accountId: string): Promise<Array<Selectable<WorldbooksTable>>> {
    return db
      .selectFrom('worldbooks')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async listWorldbookEntries(
    db: Executor,
    accountId: string,
    worldbookIds: readonly string[],
  ): Promise<Array<Selectable<WorldbookEntriesTable>>> {
    if (worldbookIds.length === 0) return [];
    return db
      .selectFrom('worldbook_entries')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(anyOf('worldbook_id', worldbookIds))
      .orderBy('worldbook_id')
      .orderBy('uid')
      .execute();
  },

  /** Every version of the assets, by asset and version number, with the kept JSON text. */
  async listAssetVersions(
    db: Executor,
    accountId: string,
    kind: AssetKind,
    assetIds: readonly string[],
  ): Promise<BackupAssetVersionRow[]> {
    if (assetIds.length === 0) return [];
    return db
      .selectFrom('asset_versions as v')
      .leftJoin('asset_version_files as f', 'f.version_id', 'v.id')
      .selectAll('v')
      .select('f.body as file_body')
      .where('v.account_id', '=', accountId)
      .where('v.asset_kind', '=', kind)
      .where(anyOf('v.asset_id', assetIds))
      .orderBy('v.asset_id')
      .orderBy('v.version_no')
      .execute();
  },

  async listUserCards(db: Executor, accountId: string): Promise<Array<Selectable<UserCardsTable>>> {
    return db
      .selectFrom('user_cards')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** The account's sessions (temporary conversations' sessions are not the account's chats). */
  async listSessions(db: Executor, accountId: string): Promise<Array<Selectable<SessionsTable>>> {
    return db
      .selectFrom('sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', 'standard')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** The account's session prompt settings rows (the export keeps those of the sessions it exports). */
  async listSessionPromptSettings(
    db: Executor,
    accountId: string,
  ): Promise<Array<Selectable<SessionPromptSettingsTable>>> {
    return db.selectFrom('session_prompt_settings').selectAll().where('account_id', '=', accountId).execute();
  },

  async listVcTags(db: Executor, accountId: string): Promise<Array<Selectable<VcTagsTable>>> {
    return db
      .selectFrom('vc_tags')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /** Logs of the account with one of the ids. */
  async listLogsByIds(
    db: Executor,
    accountId: string,
    ids: readonly string[],
  ): Promise<Array<Selectable<OperationLogsTable>>> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('operation_logs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where(anyOf('id', ids))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  /**
   * Logs of the account related to a scope: their session, floor or target is one of the given ids, or
   * they are one of `ids` (logs that made exported versions and tags).
   */
  async listLogsOfScope(
    db: Executor,
    accountId: string,
    scope: {
      sessionIds: readonly string[];
      floorIds: readonly string[];
      targetIds: readonly string[];
      ids: readonly string[];
    },
  ): Promise<Array<Selectable<OperationLogsTable>>> {
    return db
      .selectFrom('operation_logs')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) =>
        eb.or([
          anyOf('session_id', scope.sessionIds),
          anyOf('floor_id', scope.floorIds),
          anyOf('target_id', scope.targetIds),
          anyOf('id', scope.ids),
        ]),
      )
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  // ---- restore writes (the caller's transaction) ----

  async insertCharacters(tx: Tx, rows: Array<Insertable<CharactersTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('characters').values(chunk).execute());
  },

  async insertPresets(tx: Tx, rows: Array<Insertable<PresetsTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('presets').values(chunk).execute());
  },

  async insertRegexProfiles(tx: Tx, rows: Array<Insertable<RegexProfilesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('regex_profiles').values(chunk).execute());
  },

  async insertWorldbooks(tx: Tx, rows: Array<Insertable<WorldbooksTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('worldbooks').values(chunk).execute());
  },

  async insertWorldbookEntries(tx: Tx, rows: Array<Insertable<WorldbookEntriesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('worldbook_entries').values(chunk).execute());
  },

  /** Versions, and the JSON text of those that kept one. */
  async insertAssetVersions(
    tx: Tx,
    rows: Array<Insertable<AssetVersionsTable> & { file_body: string | null }>,
  ): Promise<void> {
    const versions = rows.map(({ file_body: _file, ...row }) => row);
    const files = rows
      .filter((row) => row.file_body !== null)
      .map((row) => ({ version_id: row.id, account_id: row.account_id, body: row.file_body! }));
    await insertChunked(versions, (chunk) => tx.insertInto('asset_versions').values(chunk).execute());
    await insertChunked(files, (chunk) => tx.insertInto('asset_version_files').values(chunk).execute());
  },

  async insertUserCards(tx: Tx, rows: Array<Insertable<UserCardsTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('user_cards').values(chunk).execute());
  },

  async insertVcTags(tx: Tx, rows: Array<Insertable<VcTagsTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('vc_tags').values(chunk).execute());
  },

  async insertOperationLogs(tx: Tx, rows: Array<Insertable<OperationLogsTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('operation_logs').values(chunk).execute());
  },

  /** Names among `names` that tags of the account already use. */
  async takenTagNames(db: Executor, accountId: string, names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await db
      .selectFrom('vc_tags')
      .select('name')
      .where('account_id', '=', accountId)
      .where(anyOf('name', names))
      .execute();
    return new Set(rows.map((row) => row.name));
  },

  /** Names among `names` that live user cards of the account already use. */
  async takenUserCardNames(db: Executor, accountId: string, names: readonly string[]): Promise<Set<string>> {
    if (names.length === 0) return new Set();
    const rows = await db
      .selectFrom('user_cards')
      .select('name')
      .where('account_id', '=', accountId)
      .where('deleted_at', 'is', null)
      .where(anyOf('name', names))
      .execute();
    return new Set(rows.map((row) => row.name));
  },

  /** Client ids among `ids` that are Clients of the account. */
  async clientsOfAccount(db: Executor, accountId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db
      .selectFrom('clients')
      .select('id')
      .where('account_id', '=', accountId)
      .where(anyOf('id', ids))
      .execute();
    return new Set(rows.map((row) => row.id));
  },

  /** Gives a restored session the status, binding and dates of the original. */
  async restoreSessionState(
    tx: Tx,
    sessionId: string,
    values: Pick<
      SessionsTable,
      'status' | 'archived_at' | 'character_id' | 'character_version_id' | 'created_at' | 'updated_at'
    >,
  ): Promise<void> {
    await tx.updateTable('sessions').set(values).where('id', '=', sessionId).execute();
  },

  // ---- jobs ----

  async insertJob(tx: Tx, row: Insertable<BackupJobsTable>): Promise<void> {
    await tx.insertInto('backup_jobs').values(row).execute();
  },

  /** The job of the account with its ledger fields. */
  async findJob(db: Executor, accountId: string, id: string): Promise<BackupJobView | undefined> {
    return db
      .selectFrom('backup_jobs as b')
      .innerJoin('jobs as j', 'j.id', 'b.id')
      .selectAll('b')
      .select(['j.status', 'j.last_error', 'j.last_error_code', 'j.attempt_count', 'j.finished_at'])
      .where('b.account_id', '=', accountId)
      .where('b.id', '=', id)
      .executeTakeFirst();
  },

  /** The job row, any account (the worker acts for the job's own). */
  async findJobRow(db: Executor, id: string): Promise<BackupJobRow | undefined> {
    return db.selectFrom('backup_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** The job row locked for the worker's transaction. */
  async lockJob(tx: Tx, id: string): Promise<BackupJobRow | undefined> {
    return tx.selectFrom('backup_jobs').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  },

  /** Records a restore's outcome and drops the document text. */
  async setRestoreResult(tx: Tx, id: string, result: unknown, now: number): Promise<void> {
    await tx
      .updateTable('backup_jobs')
      .set({ restored: true, result: JSON.stringify(result), input_text: null, updated_at: now })
      .where('id', '=', id)
      .execute();
  },

  /** Records an export's outcome and writes its file (replacing the file of an earlier attempt). */
  async saveArtifact(
    tx: Tx,
    artifact: Insertable<BackupArtifactsTable>,
    result: unknown,
    now: number,
  ): Promise<void> {
    await tx
      .insertInto('backup_artifacts')
      .values(artifact)
      .onConflict((oc) =>
        oc.column('job_id').doUpdateSet((eb) => ({
          content: eb.ref('excluded.content'),
          byte_count: eb.ref('excluded.byte_count'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute();
    await tx
      .updateTable('backup_jobs')
      .set({ result: JSON.stringify(result), output_expires_at: artifact.expires_at, updated_at: now })
      .where('id', '=', artifact.job_id)
      .execute();
  },

  async findArtifact(db: Executor, accountId: string, jobId: string): Promise<BackupArtifactRow | undefined> {
    return db
      .selectFrom('backup_artifacts')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .executeTakeFirst();
  },
};
