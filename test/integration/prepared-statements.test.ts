import { CompiledQuery } from 'kysely';
import { type DatabaseHandle, type Executor, migrateToLatest, openDatabase } from '@hearth/persistence';
import { compiledOnce } from '../../libs/persistence/src/compiled-once';
import { preparedStatement, preparedStatementName } from '../../libs/persistence/src/prepared-statements';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** A marked text: runs as a named prepared statement on Postgres. */
const MARKED = preparedStatement('SELECT $1::text || $2::text AS joined /* prepared-statements test */');
const UNMARKED = 'SELECT $1::text || $2::text AS joined /* unmarked */';

/** compiledOnce queries: one with explicit columns (prepared), one selecting `*` (not prepared). */
const namedColumns = compiledOnce((db: Executor, id: string) =>
  db.selectFrom('accounts').select(['id', 'name']).where('id', '=', id),
);
const allColumns = compiledOnce((db: Executor, id: string) =>
  db.selectFrom('accounts').selectAll().where('id', '=', id),
);

const run = async (db: Executor, text: string, a: string, b: string) =>
  (await db.executeQuery<{ joined: string }>(CompiledQuery.raw(text, [a, b]))).rows;

describe('prepared statements on Postgres', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;

  /** One pool connection, so the session catalogue read here is the one the statements ran on. */
  beforeAll(async () => {
    database = await createTestDatabase();
    handle = await openDatabase({ url: database.url, poolSize: 1 });
  });
  afterAll(async () => {
    await handle.close();
    await database.drop();
  });

  const preparedTexts = async () =>
    (
      await handle.db.executeQuery<{ name: string; statement: string }>(
        CompiledQuery.raw('SELECT name, statement FROM pg_prepared_statements'),
      )
    ).rows;

  it('runs a marked text as a named statement, with each call’s values', async () => {
    expect(await run(handle.db, MARKED, 'a', 'b')).toEqual([{ joined: 'ab' }]);
    expect(await run(handle.db, MARKED, 'c', 'd')).toEqual([{ joined: 'cd' }]);
    const name = preparedStatementName(MARKED);
    expect(name).toMatch(/^hearth_\d+$/);
    const prepared = await preparedTexts();
    expect(prepared.filter((p) => p.name === name)).toEqual([{ name, statement: MARKED }]);
  });

  it('leaves other texts unnamed', async () => {
    expect(await run(handle.db, UNMARKED, 'x', 'y')).toEqual([{ joined: 'xy' }]);
    expect(preparedStatementName(UNMARKED)).toBeUndefined();
    expect((await preparedTexts()).some((p) => p.statement === UNMARKED)).toBe(false);
  });

  it('prepares compiledOnce queries unless their result has a `*`', async () => {
    await migrateToLatest(handle.db);
    expect(await namedColumns(handle.db, 'acc_none')).toEqual([]);
    expect(await allColumns(handle.db, 'acc_none')).toEqual([]);
    const statements = (await preparedTexts()).map((p) => p.statement);
    expect(statements.some((s) => s.includes('select "id", "name" from "accounts"'))).toBe(true);
    expect(statements.some((s) => s.includes('select * from "accounts"'))).toBe(false);
  });

  it('inside a transaction too; a statement failing on its values leaves it usable', async () => {
    await expect(
      handle.db.transaction().execute(async (tx) => {
        expect(await run(tx, MARKED, 'in', 'tx')).toEqual([{ joined: 'intx' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const failing = preparedStatement('SELECT $1::int + $2::int AS joined');
    await expect(run(handle.db, failing, 'not a number', '1')).rejects.toThrow(/invalid input syntax/);
    expect(await run(handle.db, failing, '2', '3')).toEqual([{ joined: 5 }]);
    expect(await run(handle.db, MARKED, 'still', 'fine')).toEqual([{ joined: 'stillfine' }]);
  });
});

describe('prepared statements on PGlite', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({ url: null, dataDir: 'memory://' });
  });
  afterAll(async () => {
    await handle.close();
  });

  it('a marked text runs as it is', async () => {
    expect(await run(handle.db, MARKED, 'p', 'g')).toEqual([{ joined: 'pg' }]);
    expect(await run(handle.db, MARKED, 'l', 'ite')).toEqual([{ joined: 'lite' }]);
  });
});
