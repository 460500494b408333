import { migrateToLatest, openDatabase } from '@hearth/persistence';
import { ConfigError, loadConfig } from '@hearth/platform';

/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
async function main() {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    applicationName: 'hearth-migrate',
  });
  try {
    const results = await migrateToLatest(database.db);
    const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
    process.stdout.write(
      applied.length
        ? `Applied ${applied.length} migration(s): ${applied.join(', ')}\n`
        : 'Database is up to date\n',
    );
  } finally {
    await database.close();
  }
}

main().catch((error) => {
  process.stderr.write(`Migration failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
