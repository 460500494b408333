import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JobsModule, RequestSystemPingUseCase } from '@hearth/app';
import { jobsRepository, type JobRow } from '@hearth/persistence';
import {
  ConfigError,
  JsonLogger,
  loadConfig,
  openPlatformResources,
  PlatformModule,
  type PlatformResources,
} from '@hearth/platform';

@Module({})
class PingModule {}

const FINAL = new Set<JobRow['status']>(['succeeded', 'dead_letter', 'cancelled']);

/**
 * Operators' check of the worker tier: creates a `system.ping` job and waits for a worker to run
 * it. Resolves with the row as it is at the end (`succeeded` with `{pong: true}`, or still
 * `pending` when no worker took it in time).
 */
export async function pingWorkers(resources: PlatformResources, timeoutMs = 30_000): Promise<JobRow> {
  const app = await NestFactory.createApplicationContext(
    { module: PingModule, imports: [PlatformModule.register(resources), JobsModule.register()] },
    { logger: false },
  );
  try {
    const job = await app.get(RequestSystemPingUseCase).execute();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = (await jobsRepository.findById(resources.database.db, job.id))!;
      if (FINAL.has(row.status) || Date.now() >= deadline) return row;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await app.close();
  }
}

/** `node dist/apps/worker/apps/worker/src/ping.js` (image: `ping`): exit 0 when a worker answered. */
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
  if (!config.databaseUrl || !config.redisUrl) {
    process.stderr.write('The worker ping needs the DATABASE_URL and REDIS_URL the workers use.\n');
    process.exit(2);
  }
  const resources = await openPlatformResources(config, {
    logger: new JsonLogger('warn'),
    applicationName: 'hearth-ping',
  });
  try {
    const row = await pingWorkers(resources);
    const { id, status, attempt_count, result, last_error } = row;
    process.stdout.write(`${JSON.stringify({ job_id: id, status, attempt_count, result, last_error })}\n`);
    process.exitCode = status === 'succeeded' ? 0 : 1;
  } finally {
    await resources.close();
  }
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`Hearth worker ping failed: ${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  });
}
