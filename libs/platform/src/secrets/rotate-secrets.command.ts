import { migrateToLatest, openDatabase } from '@hearth/persistence';
import type { AppConfig } from '../config/app-config';
import { rotateSecrets } from './rotate-secrets';
import { SecretBox } from './secret-box';

export interface CommandOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

const processOutput: CommandOutput = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** `--batch-size N` or `--batch-size=N` (default 200). */
export function parseBatchSize(args: string[]): number | null {
  const index = args.findIndex((a) => a === '--batch-size' || a.startsWith('--batch-size='));
  if (index < 0) return 200;
  const raw = args[index].includes('=') ? args[index].split('=')[1] : args[index + 1];
  if (!raw || !/^\d+$/.test(raw)) return null;
  const value = Number(raw);
  return value >= 1 && value <= 10_000 ? value : null;
}

/**
 * The secrets rotation command (`node dist/apps/api/apps/api/src/main.js --rotate-secrets`, or
 * `node scripts/rotate-secrets.js`): re-encrypts every model API key under `APP_SECRETS_MASTER_KEY`,
 * reading the old ones with `APP_SECRETS_PREVIOUS_MASTER_KEYS`. Prints counts, never a key or a
 * ciphertext. Exit code: 0 done, 1 some keys could not be read (left unchanged), 2 bad usage.
 */
export async function runRotateSecretsCommand(
  config: AppConfig,
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const batchSize = parseBatchSize(args);
  if (batchSize === null) {
    out.stderr('--batch-size must be an integer between 1 and 10000');
    return 2;
  }
  if (!config.secretsMasterKey) {
    out.stderr('APP_SECRETS_MASTER_KEY is not set: there is no key to rotate to');
    return 2;
  }
  const box = SecretBox.fromConfig(config);
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    applicationName: 'hearth-rotate-secrets',
  });
  try {
    if (database.kind === 'pglite') await migrateToLatest(database.db);
    out.stdout(
      `Re-encrypting model API keys under key ${box.currentKeyId} (${config.secretsPreviousMasterKeys.length} previous key(s)), batches of ${batchSize}`,
    );
    const report = await rotateSecrets(database.db, box, {
      batchSize,
      onBatch: (p) =>
        out.stdout(
          `  ${p.scanned} scanned: ${p.rotated} re-encrypted, ${p.current} already current, ${p.failed} unreadable`,
        ),
    });
    out.stdout(
      `Done: ${report.scanned} profile(s), ${report.rotated} re-encrypted, ${report.current} already current, ${report.failed} unreadable`,
    );
    if (report.failed > 0) {
      out.stderr(
        `Unreadable with every configured key (left unchanged): ${report.failedIds.join(', ')}. ` +
          'Add the key they were encrypted under to APP_SECRETS_PREVIOUS_MASTER_KEYS and run again, or re-enter those keys.',
      );
      return 1;
    }
    if (report.rotated > 0 || config.secretsPreviousMasterKeys.length > 0)
      out.stdout(
        'Every key is under the current master key: APP_SECRETS_PREVIOUS_MASTER_KEYS can now be removed.',
      );
    return 0;
  } finally {
    await database.close();
  }
}
