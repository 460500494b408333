import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { BootstrapDefaultAccountUseCase } from '@hearth/app';
import {
  type AppConfig,
  JsonLogger,
  loadConfig,
  openPlatformResources,
  type PlatformResources,
} from '@hearth/platform';
import { createApiApp } from '../../apps/api/src/create-api-app';
import { REDIS_URL } from './postgres-admin';
import { createTestDatabase, type TestDatabase } from './test-database';

export const ADMIN_KEY = 'hth_test_admin_key_0123456789abcdef';

export interface TestAppOptions {
  /** Extra environment variables, read through loadConfig like in production. */
  env?: Record<string, string>;
  /** Reuse a database (two API instances on one database); by default each app gets its own. */
  database?: TestDatabase;
  /** Embedded mode: PGlite in memory and the in-process bus. */
  embedded?: boolean;
  /** Use Redis for the bus (default true unless embedded). */
  redis?: boolean;
  /** Capture log lines instead of printing them. */
  logSink?: (line: string) => void;
}

export interface TestApp {
  app: NestExpressApplication;
  resources: PlatformResources;
  config: AppConfig;
  database: TestDatabase | null;
  /** The base URL the app listens on (loopback, random port). */
  baseUrl: string;
  /** supertest bound to the app, with the admin key unless another is given. */
  http: ReturnType<typeof request>;
  logs: string[];
  close(): Promise<void>;
}

/** Starts the real API on a random loopback port, on its own database, with the admin key set. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const embedded = options.embedded ?? false;
  const database = embedded ? null : (options.database ?? (await createTestDatabase()));
  const ownsDatabase = !embedded && !options.database;
  const useRedis = !embedded && (options.redis ?? true);
  const dataDir = embedded && !options.env?.HEARTH_DATA_DIR ? copyOfPgliteTemplate() : null;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'warn',
    // Each app its own queue namespace, so no suite's jobs reach another suite's workers.
    QUEUE_PREFIX: `hearth_t_${randomBytes(4).toString('hex')}`,
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(useRedis ? { REDIS_URL } : {}),
    ...(embedded ? { HEARTH_DATA_DIR: dataDir ?? 'memory://' } : {}),
    ...options.env,
  });
  const logs: string[] = [];
  const logger = new JsonLogger(config.logLevel, options.logSink ?? ((line) => logs.push(line)));
  const resources = await openPlatformResources(config, { logger, applicationName: 'hearth-test' });
  const app = await createApiApp(resources);
  await app.get(BootstrapDefaultAccountUseCase).execute();
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    resources,
    config,
    database,
    baseUrl: `http://127.0.0.1:${port}`,
    http: request(app.getHttpServer()),
    logs,
    async close() {
      await app.close();
      await resources.close();
      if (ownsDatabase && database) await database.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh copy of the migrated PGlite data directory of the test run (global-setup.ts), or null when
 * there is none (a suite run without the global setup): the embedded app then starts in memory.
 */
function copyOfPgliteTemplate(): string | null {
  const template = process.env.HEARTH_TEST_PGLITE_TEMPLATE;
  if (!template) return null;
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-pglite-'));
  cpSync(template, dataDir, { recursive: true });
  return dataDir;
}
