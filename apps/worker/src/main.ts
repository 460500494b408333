import 'reflect-metadata';

/** `npm run start:worker`: the worker tier (BullMQ consumers, maintenance scheduler). */
async function main() {
  throw new Error('worker entry point is being built');
}

main().catch((error) => {
  process.stderr.write(`Hearth worker failed to start: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
