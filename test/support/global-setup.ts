import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from '../../libs/persistence/src/migrator';
import { databaseUrl, withAdminClient } from './postgres-admin';

/**
 * Migrates one template database per test run; every suite then creates its own database from it
 * (ARCHITECTURE.md "Tests"), so suites run in parallel without sharing rows.
 */
export default async function globalSetup(): Promise<void> {
  const template = `hearth_tpl_${randomBytes(4).toString('hex')}`;
  await withAdminClient(async (client) => {
    await client.query(`CREATE DATABASE ${template}`);
  });
  const pool = new pg.Pool({ connectionString: databaseUrl(template), max: 1 });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  process.env.HEARTH_TEST_TEMPLATE_DB = template;
}
