import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../libs/persistence/src/database';
import { migrateToLatest } from '../../libs/persistence/src/migrator';
import { databaseUrl, withAdminClient } from './postgres-admin';

/**
 * Migrates one template database per test run; every suite then creates its own database from it
 * (ARCHITECTURE.md "Tests"), so suites run in parallel without sharing rows. Likewise one migrated
 * PGlite data directory: each embedded-mode app starts on its own copy (test-app.ts), which opens in
 * a fraction of a second instead of running initdb and every migration in WASM.
 */
export default async function globalSetup(): Promise<void> {
  await migratePgliteTemplate();
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

async function migratePgliteTemplate(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-pglite-tpl-'));
  const database = await openDatabase({ url: null, dataDir });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  process.env.HEARTH_TEST_PGLITE_TEMPLATE = dataDir;
}
