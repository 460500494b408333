import './gc-tuning';
import 'reflect-metadata';
import { BootstrapDefaultAccountUseCase } from '@hearth/app';
import { ConfigError, loadConfig, openPlatformResources, runRotateSecretsCommand } from '@hearth/platform';
import { startWorker } from '../../worker/src/worker-runtime';
import { createApiApp } from './create-api-app';

/**
 * `npm run start:api`: the API tier. `npm start` passes `--all-in-one`: API and worker in one
 * process, on the embedded adapters when DATABASE_URL and REDIS_URL are unset. `--rotate-secrets`
 * re-encrypts the stored model API keys and exits (README "Rotating the secrets master key").
 */
async function main() {
  const allInOne = process.argv.includes('--all-in-one');
  let config;
  try {
    config = loadConfig(process.env, { host: allInOne ? '127.0.0.1' : '0.0.0.0' });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // `--rotate-secrets`: re-encrypt every stored model API key under the current master key, then exit.
  if (process.argv.includes('--rotate-secrets'))
    process.exit(await runRotateSecretsCommand(config, process.argv.slice(2)));

  const resources = await openPlatformResources(config, { applicationName: 'hearth-api' });
  const { logger } = resources;
  const app = await createApiApp(resources);
  const bootstrap = await app.get(BootstrapDefaultAccountUseCase).execute();
  // --all-in-one: the worker's consumers in this process, on the same resources (and in-process queue).
  const worker = allInOne ? await startWorker(resources, { selfCheck: true }) : null;

  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({
    msg: `Hearth API listening on ${url}`,
    url,
    mode: allInOne ? 'all-in-one' : 'api',
    database: resources.database.kind,
    event_bus: resources.eventBus.kind,
    job_queue: resources.jobQueue.kind,
  });
  if (bootstrap.generatedApiKey) {
    // Shown once: only its hash is stored.
    process.stdout.write(
      `\n  Hearth is running at ${url}\n  Admin API key (shown once, keep it): ${bootstrap.generatedApiKey}\n\n`,
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: 'shutting down', signal });
    const timer = setTimeout(() => process.exit(1), 15_000);
    timer.unref();
    // New connections are refused from now on (a load balancer sends them to another replica; idle
    // keep-alive connections are closed). app.close() then cancels the running generations, ends the
    // event streams and waits for the requests still open (docs/decisions.md "Turns and runs").
    app.getHttpServer().close();
    await app.close();
    await worker?.close();
    await resources.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(
    `Hearth failed to start: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
  );
  process.exit(1);
});
