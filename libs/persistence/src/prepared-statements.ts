import pg from 'pg';

/** SQL text of a hot statement -> its prepared statement name. */
const names = new Map<string, string>();

/**
 * Marks a SQL text as a hot statement: on the Postgres pools of `openDatabase`, each connection parses
 * and plans it once (a named prepared statement) and afterwards only binds and executes it, which
 * for a large statement is most of its cost. Other texts run as before (unnamed statements).
 *
 * Only for texts with a fixed result shape, i.e. no `*` in the output: Postgres refuses to run a
 * prepared statement whose result columns changed since it was prepared (a migration adding a
 * column while the server runs). Returns the text, so a module can write
 * `const SQL = preparedStatement(\`...\`)`. On PGlite the text simply runs as it is.
 */
export function preparedStatement(text: string): string {
  if (!names.has(text)) names.set(text, `hearth_${names.size + 1}`);
  return text;
}

/** The name a text runs under, if it was marked (tests). */
export const preparedStatementName = (text: string): string | undefined => names.get(text);

/**
 * The pool's Client: runs the marked texts as named prepared statements (node-postgres parses a
 * name once per connection and reuses it), everything else unchanged.
 */
export class PreparingClient extends pg.Client {}

const baseQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;

// node-postgres' `query` is a set of overloads; kysely calls the `(text, values)` form.
PreparingClient.prototype.query = function query(this: pg.Client, ...args: unknown[]) {
  const [text, values] = args;
  if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) {
    const name = names.get(text);
    if (name) return baseQuery.call(this, { name, text, values });
  }
  return baseQuery.apply(this, args);
} as pg.Client['query'];
