import 'reflect-metadata';
import { ConfigError, loadConfig, openPlatformResources } from '@hearth/platform';
import { startWorker } from './worker-runtime';

/**
 * `npm run start:worker`: the worker tier (BullMQ consumers, maintenance scheduler), no HTTP.
 * SIGTERM/SIGINT: stop taking jobs, let running ones finish (or hand them back after the grace
 * period), close the resources.
 */
async function main() {
  let config;
  try {
    config = loadConfig(process.env, { host: '0.0.0.0' });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (!config.databaseUrl || !config.redisUrl) {
    // Without both, this process could only drain its own private embedded database and queue.
    process.stderr.write(
      'The worker tier needs DATABASE_URL and REDIS_URL. For one process on the embedded defaults, run `npm start`.\n',
    );
    process.exit(2);
  }

  const resources = await openPlatformResources(config, { applicationName: 'hearth-worker' });
  const { logger } = resources;
  let worker;
  try {
    worker = await startWorker(resources, { selfCheck: true });
  } catch (error) {
    await resources.close();
    throw error;
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log({ msg: 'shutting down', signal }, 'Worker');
    const timer = setTimeout(() => process.exit(1), 30_000);
    timer.unref();
    await worker.close();
    await resources.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(
    `Hearth worker failed to start: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
