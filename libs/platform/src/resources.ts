import { mkdirSync } from 'node:fs';
import { CredentialCache, openDatabase, type DatabaseHandle, migrateToLatest } from '@hearth/persistence';
import type { AppConfig } from './config/app-config';
import type { EventBus } from './event-bus/event-bus';
import { InProcessEventBus } from './event-bus/in-process-event-bus';
import { RedisEventBus } from './event-bus/redis-event-bus';
import { JsonLogger } from './logging/json-logger';
import { Metrics } from './metrics/metrics';
import type { JobQueue } from './queue/jobs';
import { createJobQueue } from './queue/job-transport';

/**
 * Everything a process holds open: the database, the bus, the logger. Opened once at boot by the
 * entry point (or a test), handed to Nest as values, and closed by the entry point at shutdown.
 * The embedded adapters are chosen here from config; no code path above differs.
 */
export interface PlatformResources {
  config: AppConfig;
  database: DatabaseHandle;
  /** The API-key lookups of this process (cached while the database's change notifications arrive). */
  credentials: CredentialCache;
  eventBus: EventBus;
  /** BullMQ when REDIS_URL is set, in-process otherwise. */
  jobQueue: JobQueue;
  logger: JsonLogger;
  metrics: Metrics;
  close(): Promise<void>;
}

export interface OpenResourcesOptions {
  logger?: JsonLogger;
  metrics?: Metrics;
  /** Run migrations before returning (embedded mode always does). */
  migrate?: boolean;
  applicationName?: string;
}

export async function openPlatformResources(
  config: AppConfig,
  options: OpenResourcesOptions = {},
): Promise<PlatformResources> {
  const logger = options.logger ?? new JsonLogger(config.logLevel);
  if (!config.databaseUrl && !config.dataDir.startsWith('memory://'))
    mkdirSync(config.dataDir, { recursive: true });
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    applicationName: options.applicationName,
  });
  if (options.migrate || config.dbMigrateOnStart || database.kind === 'pglite') {
    await migrateToLatest(database.db);
  }
  const eventBus: EventBus = config.redisUrl
    ? new RedisEventBus(config.redisUrl, (error) =>
        logger.warn({ msg: 'event bus connection error', error: String(error) }, 'EventBus'),
      )
    : new InProcessEventBus();
  const jobQueue = createJobQueue(config, (error) =>
    logger.warn({ msg: 'job queue connection error', error: String(error) }, 'JobQueue'),
  );

  const credentials = new CredentialCache(database);

  let closed = false;
  return {
    config,
    database,
    credentials,
    eventBus,
    jobQueue,
    logger,
    metrics: options.metrics ?? new Metrics(),
    async close() {
      if (closed) return;
      closed = true;
      await jobQueue.close();
      await eventBus.close();
      await credentials.close();
      await database.close();
    },
  };
}
