import { type Kysely, sql } from 'kysely';

/**
 * Runs a block of DDL one statement at a time: PGlite's extended protocol takes one statement per
 * query. Statements are separated by a semicolon at the end of a line.
 */
export async function runStatements(db: Kysely<unknown>, block: string): Promise<void> {
  const statements = block
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0);
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
