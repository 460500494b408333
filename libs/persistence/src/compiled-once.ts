import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './database';
import { preparedStatement } from './prepared-statements';

interface Compiled<R> {
  query: CompiledQuery<R>;
  /** For each compiled parameter: the index of the call value it stands for, or -1 for a constant. */
  slots: number[];
}

/**
 * A read on the hot path of every request (the API key lookup, the Project gate), built and compiled
 * by kysely once per executor and then run with each call's values: the same SQL, without kysely's
 * per-call building and compiling. `build` receives one placeholder string per value; in the
 * compiled parameters each placeholder is replaced by the call's value, and the query's own constants
 * (`'active'`, ...) are kept. Every value must end up as a bound parameter (checked on first use).
 * A transaction is a new executor, so inside one the query is compiled for that transaction.
 *
 * On Postgres the SQL also runs as a prepared statement (prepared-statements.ts: parsed and planned
 * once per connection), unless its result has a `*` (`selectAll`, `returningAll`), whose columns
 * could change under a running server.
 */
export function compiledOnce<V extends string[], R>(
  build: (db: Executor, ...values: V) => Compilable<R>,
): (db: Executor, ...values: V) => Promise<R[]> {
  const cache = new WeakMap<Executor, Compiled<R>>();

  const compile = (db: Executor, count: number): Compiled<R> => {
    const marks = Array.from({ length: count }, (_, i) => `\u0000hearth:value:${i}\u0000`) as V;
    const query = build(db, ...marks).compile();
    const slots = query.parameters.map((p) => (typeof p === 'string' ? marks.indexOf(p) : -1));
    marks.forEach((_, i) => {
      if (!slots.includes(i)) throw new Error(`compiledOnce: value ${i} is not a bound parameter`);
    });
    if (!hasSelectAll(query.query)) preparedStatement(query.sql);
    return { query, slots };
  };

  return async (db, ...values) => {
    let compiled = cache.get(db);
    if (!compiled) {
      compiled = compile(db, values.length);
      cache.set(db, compiled);
    }
    const { query, slots } = compiled;
    const parameters = query.parameters.map((p, i) => (slots[i] >= 0 ? values[slots[i]] : p));
    const result = await db.executeQuery<R>({ ...query, parameters });
    return result.rows;
  };
}

/** Whether a query's tree selects or returns `*` anywhere (kysely's `SelectAllNode`). */
function hasSelectAll(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if ((node as { kind?: unknown }).kind === 'SelectAllNode') return true;
  return Object.values(node).some(hasSelectAll);
}
