import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type {
  BranchesTable,
  ChatTransferArtifactsTable,
  ChatTransferJobsTable,
  ChatTransferSessionsTable,
  FloorLinesTable,
  FloorsTable,
  JobStatus,
  MessagesTable,
  PagesTable,
  VariablesTable,
} from './tables';

export type ChatTransferSessionRow = Selectable<ChatTransferSessionsTable>;
export type ChatTransferJobRow = Selectable<ChatTransferJobsTable>;
export type ChatTransferArtifactRow = Selectable<ChatTransferArtifactsTable>;

/** A chat transfer job with the ledger fields of its `jobs` row. */
export interface ChatTransferJobView extends ChatTransferJobRow {
  status: JobStatus;
  last_error: string | null;
  last_error_code: string | null;
  attempt_count: number;
  finished_at: number | null;
}

/** Every stored row of a session's conversation, for an export. */
export interface SessionTree {
  branches: Array<Selectable<BranchesTable>>;
  lines: Array<Selectable<FloorLinesTable>>;
  floors: Array<Selectable<FloorsTable>>;
  pages: Array<Selectable<PagesTable>>;
  messages: Array<Selectable<MessagesTable>>;
}

/** Rows per INSERT statement (Postgres takes at most 65,535 parameters per statement). */
const CHUNK = 500;

async function insertChunked<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

/**
 * Named queries of chat import and export (db/migrations/20261122120000_chat_transfer.ts): bulk writes
 * of an imported conversation, whole-session reads for an export, and the chat transfer job rows. Every
 * read is scoped by account.
 */
export const chatTransferRepository = {
  // ---- conversation rows of an import (the caller's transaction) ----

  async insertLines(tx: Tx, rows: Array<Insertable<FloorLinesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('floor_lines').values(chunk).execute());
  },

  async insertBranches(tx: Tx, rows: Array<Insertable<BranchesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('branches').values(chunk).execute());
  },

  /** Updates the branch the session was created with (`main`) to the imported one's fields. */
  async updateBranch(
    tx: Tx,
    branchId: string,
    values: Pick<BranchesTable, 'source_floor_id' | 'head_floor_id' | 'created_at' | 'updated_at'>,
  ): Promise<void> {
    await tx.updateTable('branches').set(values).where('id', '=', branchId).execute();
  },

  async insertFloors(tx: Tx, rows: Array<Insertable<FloorsTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('floors').values(chunk).execute());
  },

  async insertPages(tx: Tx, rows: Array<Insertable<PagesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('pages').values(chunk).execute());
  },

  async insertMessages(tx: Tx, rows: Array<Insertable<MessagesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('messages').values(chunk).execute());
  },

  async insertVariables(tx: Tx, rows: Array<Insertable<VariablesTable>>): Promise<void> {
    await insertChunked(rows, (chunk) => tx.insertInto('variables').values(chunk).execute());
  },

  async insertSessionData(tx: Tx, row: Insertable<ChatTransferSessionsTable>): Promise<void> {
    await tx.insertInto('chat_transfer_sessions').values(row).execute();
  },

  // ---- whole-session reads of an export ----

  async findSessionData(
    db: Executor,
    accountId: string,
    sessionId: string,
  ): Promise<ChatTransferSessionRow | undefined> {
    return db
      .selectFrom('chat_transfer_sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
  },

  async countMessages(db: Executor, accountId: string, sessionId: string): Promise<number> {
    const row = await db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .where('session_id', '=', sessionId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * Every branch, line, floor, page and message of the session, in storage order. An export reads it
   * inside `inReadSnapshot`: on the pool each read would see its own moment.
   */
  async readSessionTree(db: Executor, accountId: string, sessionId: string): Promise<SessionTree> {
    const [branches, lines, floors, pages, messages] = await Promise.all([
      db
        .selectFrom('branches')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
      db
        .selectFrom('floor_lines')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('session_id', '=', sessionId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
      db
        .selectFrom('floors')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('session_id', '=', sessionId)
        .orderBy('floor_no')
        .orderBy('id')
        .execute(),
      db
        .selectFrom('pages')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('session_id', '=', sessionId)
        .orderBy('floor_id')
        .orderBy('page_no')
        .execute(),
      db
        .selectFrom('messages')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('session_id', '=', sessionId)
        .orderBy('page_id')
        .orderBy('seq')
        .execute(),
    ]);
    return { branches, lines, floors, pages, messages };
  },

  /** Chat, branch, floor and page variables of the session (global ones are not the chat's). */
  async listSessionVariables(
    db: Executor,
    accountId: string,
    sessionId: string,
  ): Promise<Array<Selectable<VariablesTable>>> {
    return db
      .selectFrom('variables')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('session_id', '=', sessionId)
      .where('scope', '<>', 'global')
      .orderBy('scope')
      .orderBy('key')
      .orderBy('id')
      .execute();
  },

  // ---- jobs ----

  async insertJob(tx: Tx, row: Insertable<ChatTransferJobsTable>): Promise<void> {
    await tx.insertInto('chat_transfer_jobs').values(row).execute();
  },

  /** The job of the account with its ledger fields. */
  async findJob(db: Executor, accountId: string, id: string): Promise<ChatTransferJobView | undefined> {
    return db
      .selectFrom('chat_transfer_jobs as c')
      .innerJoin('jobs as j', 'j.id', 'c.id')
      .selectAll('c')
      .select(['j.status', 'j.last_error', 'j.last_error_code', 'j.attempt_count', 'j.finished_at'])
      .where('c.account_id', '=', accountId)
      .where('c.id', '=', id)
      .executeTakeFirst();
  },

  /** The job row, any account (the worker acts for the job's own). */
  async findJobRow(db: Executor, id: string): Promise<ChatTransferJobRow | undefined> {
    return db.selectFrom('chat_transfer_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** The job row locked for the worker's transaction (any account: the worker acts for the job's own). */
  async lockJob(tx: Tx, id: string): Promise<ChatTransferJobRow | undefined> {
    return tx
      .selectFrom('chat_transfer_jobs')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  /** Records an import's outcome and drops the raw text. */
  async setImportResult(tx: Tx, id: string, sessionId: string, result: unknown, now: number): Promise<void> {
    await tx
      .updateTable('chat_transfer_jobs')
      .set({
        result_session_id: sessionId,
        result: JSON.stringify(result),
        input_text: null,
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  },

  /** Records an export's outcome and writes its file (replacing the file of an earlier attempt). */
  async saveArtifact(
    tx: Tx,
    artifact: Insertable<ChatTransferArtifactsTable>,
    result: unknown,
    now: number,
  ): Promise<void> {
    await tx
      .insertInto('chat_transfer_artifacts')
      .values(artifact)
      .onConflict((oc) =>
        oc.column('job_id').doUpdateSet((eb) => ({
          filename_base: eb.ref('excluded.filename_base'),
          extension: eb.ref('excluded.extension'),
          content_type: eb.ref('excluded.content_type'),
          content: eb.ref('excluded.content'),
          byte_count: eb.ref('excluded.byte_count'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        })),
      )
      .execute();
    await tx
      .updateTable('chat_transfer_jobs')
      .set({
        result: JSON.stringify(result),
        result_session_id: null,
        output_expires_at: artifact.expires_at,
        updated_at: now,
      })
      .where('id', '=', artifact.job_id)
      .execute();
  },

  async findArtifact(
    db: Executor,
    accountId: string,
    jobId: string,
  ): Promise<ChatTransferArtifactRow | undefined> {
    return db
      .selectFrom('chat_transfer_artifacts')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('job_id', '=', jobId)
      .executeTakeFirst();
  },
};
