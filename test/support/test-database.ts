import { randomBytes } from 'node:crypto';
import { databaseUrl, withAdminClient } from './postgres-admin';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one suite, cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.HEARTH_TEST_TEMPLATE_DB;
  if (!template)
    throw new Error('HEARTH_TEST_TEMPLATE_DB is not set: run the tests through jest (global setup)');
  const name = `hearth_t_${randomBytes(5).toString('hex')}`;
  // Cloning needs the template to have no other connection; retry briefly when two suites clone at once.
  for (let attempt = 0; ; attempt++) {
    try {
      await withAdminClient((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
      break;
    } catch (error) {
      if (attempt >= 20 || !String(error).includes('being accessed by other users')) throw error;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  return {
    name,
    url: databaseUrl(name),
    drop: () =>
      withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}
