import type { CompiledQuery, QueryResult } from 'kysely';
import { CONNECTION_KEEPALIVE } from './connection-keepalive';
import { PreparingClient } from './prepared-statements';

/** What runs one statement by itself (its own transaction): the pool, or a StatementPipeline. */
export interface StatementExecutor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

export interface StatementPipelineOptions {
  url: string;
  applicationName: string;
  /**
   * A statement sent while the oldest one in the pipe has run for longer than this goes to
   * `overflow` instead: one held up by a lock must not hold up every statement queued behind it.
   */
  stallMs: number;
  /** Where statements go while the pipe is stalled (the pool). */
  overflow: StatementExecutor;
}

const WRITE_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * One connection on which statements are pipelined: each is sent at once, behind those still
 * running, and Postgres runs them one after the other with no round trip in between. A writer
 * that sends its next statement while the current one runs (group commit) thus keeps the server
 * busy while the process is busy elsewhere (a pooled connection waits until the process has read
 * the result and sent the next statement).
 *
 * Only for statements that are whole transactions by themselves: every statement here is its own
 * implicit transaction (node-postgres ends each with a Sync), and a BEGIN would take in the
 * statements other callers send. A failed statement fails alone; the ones behind it run. The
 * connection is opened at the first statement, and opened again at the next one after it is
 * lost (the statements in the pipe then fail, as on any lost connection).
 */
export class StatementPipeline implements StatementExecutor {
  private connection: Promise<PreparingClient> | undefined;
  /** When each statement now in the pipe was sent. */
  private readonly inPipe = new Set<{ sentAt: number }>();
  private closed = false;

  constructor(private readonly options: StatementPipelineOptions) {}

  /** Statements sent on the pipe and not yet answered. */
  get pending(): number {
    return this.inPipe.size;
  }

  async executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    if (this.closed || this.stalled()) return this.options.overflow.executeQuery(query);
    const sent = { sentAt: Date.now() };
    this.inPipe.add(sent);
    try {
      const client = await this.connect();
      const result = await client.query(query.sql, [...query.parameters]);
      return {
        rows: result.rows as R[],
        ...(WRITE_COMMANDS.has(result.command) && result.rowCount !== null
          ? { numAffectedRows: BigInt(result.rowCount) }
          : {}),
      };
    } finally {
      this.inPipe.delete(sent);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await connection.then((client) => client.end()).catch(() => undefined);
  }

  private stalled(): boolean {
    const staleBefore = Date.now() - this.options.stallMs;
    for (const statement of this.inPipe) if (statement.sentAt < staleBefore) return true;
    return false;
  }

  private connect(): Promise<PreparingClient> {
    if (this.connection) return this.connection;
    const client = new PreparingClient({
      connectionString: this.options.url,
      application_name: this.options.applicationName,
      pipeline: true,
      ...CONNECTION_KEEPALIVE,
      // As the pool's: an unreachable server fails the statements (written again on the pool)
      // instead of holding them until the operating system gives up.
      connectionTimeoutMillis: 5000,
    });
    const connection = client.connect().then(() => client);
    const lost = () => {
      if (this.connection === connection) this.connection = undefined;
      client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', lost);
    connection.catch(lost);
    this.connection = connection;
    return connection;
  }
}
