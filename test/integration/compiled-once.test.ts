import { ID_PREFIX, newId } from '@hearth/domain';
import {
  credentialsRepository,
  type DatabaseHandle,
  type Db,
  type Executor,
  inTransaction,
  migrateToLatest,
  openDatabase,
  projectsRepository,
} from '@hearth/persistence';
import { compiledOnce } from '../../libs/persistence/src/compiled-once';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** Two accounts, each with an active and a disabled Client, written directly. */
async function seedAccounts(db: Db) {
  const now = Date.now();
  const ids = { a: newId(ID_PREFIX.account), b: newId(ID_PREFIX.account) };
  for (const [name, id] of Object.entries(ids)) {
    await db
      .insertInto('accounts')
      .values({
        id,
        name: `account ${name}`,
        role: 'user',
        status: 'active',
        is_default: false,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  return ids;
}

/** The query under test: constants ('user') stay bound, values take their call's place. */
const accountsNamed = compiledOnce((db: Executor, name: string, id: string) =>
  db
    .selectFrom('accounts')
    .select(['id', 'name'])
    .where('role', '=', 'user')
    .where((eb) => eb.or([eb('name', '=', name), eb('id', '=', id)]))
    .orderBy('name'),
);

function suite(kind: 'postgres' | 'pglite') {
  describe(`compiledOnce on ${kind}`, () => {
    let database: TestDatabase | null = null;
    let handle: DatabaseHandle;
    let ids: { a: string; b: string };

    beforeAll(async () => {
      if (kind === 'postgres') {
        database = await createTestDatabase();
        handle = await openDatabase({ url: database.url, poolSize: 2 });
      } else {
        handle = await openDatabase({ url: null, dataDir: 'memory://' });
        await migrateToLatest(handle.db);
      }
      ids = await seedAccounts(handle.db);
    });
    afterAll(async () => {
      await handle.close();
      await database?.drop();
    });

    it('runs with each call’s values, keeping the query’s constants', async () => {
      const db = handle.db;
      expect(await accountsNamed(db, 'account a', 'none')).toEqual([{ id: ids.a, name: 'account a' }]);
      expect(await accountsNamed(db, 'none', ids.b)).toEqual([{ id: ids.b, name: 'account b' }]);
      expect(await accountsNamed(db, 'account a', ids.b)).toEqual([
        { id: ids.a, name: 'account a' },
        { id: ids.b, name: 'account b' },
      ]);
      expect(await accountsNamed(db, 'none', 'none')).toEqual([]);
      // The constant is still bound: an admin account is not found by name.
      await db.updateTable('accounts').set({ role: 'admin' }).where('id', '=', ids.a).execute();
      expect(await accountsNamed(db, 'account a', 'none')).toEqual([]);
      await db.updateTable('accounts').set({ role: 'user' }).where('id', '=', ids.a).execute();
    });

    it('runs inside a transaction on the transaction (sees its uncommitted rows)', async () => {
      await inTransaction(handle.db, async ({ tx }) => {
        await tx.updateTable('accounts').set({ name: 'renamed in tx' }).where('id', '=', ids.b).execute();
        expect(await accountsNamed(tx, 'renamed in tx', 'none')).toEqual([
          { id: ids.b, name: 'renamed in tx' },
        ]);
        // PGlite has one connection, which the transaction holds: only Postgres can look from outside.
        if (kind === 'postgres') expect(await accountsNamed(handle.db, 'renamed in tx', 'none')).toEqual([]);
        await tx.updateTable('accounts').set({ name: 'account b' }).where('id', '=', ids.b).execute();
      });
    });

    it('treats values as parameters, never as SQL', async () => {
      expect(await accountsNamed(handle.db, "x' or '1'='1", "' or 1=1 --")).toEqual([]);
    });

    it('refuses a query where a value is not a bound parameter', async () => {
      const inlined = compiledOnce((db: Executor, name: string) =>
        db
          .selectFrom('accounts')
          .select('id')
          .where('name', '=', name.length > 0 ? 'constant' : 'other'),
      );
      await expect(inlined(handle.db, 'a')).rejects.toThrow('value 0 is not a bound parameter');
    });

    it('serves the hot repository reads with the same results as before', async () => {
      const db = handle.db;
      expect(await credentialsRepository.findByKeyHash(db, 'no-such-hash')).toBeUndefined();
      expect(await projectsRepository.findProject(db, 'prj_none')).toBeUndefined();
      const subject = { accountId: ids.a, clientId: 'cli_none', clientIsDefault: true };
      expect(await projectsRepository.findActiveMemberRole(db, 'prj_none', subject)).toBeUndefined();
      expect(
        await projectsRepository.findActiveMemberRole(db, 'prj_none', { ...subject, clientIsDefault: false }),
      ).toBeUndefined();
    });
  });
}

suite('postgres');
suite('pglite');
