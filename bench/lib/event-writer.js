'use strict';
// Hearth's real event write path from the built libraries: ProjectEventWriter.record inside
// inTransaction, whose after-commit action publishes the Redis wake-up the API's streams follow.
const dist = require('./dist');
const { nowMs, REDIS_URL } = require('./harness');

async function openEventWriter(databaseUrl, poolSize = 8) {
  const { inTransaction, openDatabase } = dist.persistence();
  const { RedisEventBus, JsonLogger } = dist.platform();
  const { ProjectEventWriter } = dist.projectEventWriter();
  const logger = new JsonLogger('warn', (line) => process.stderr.write(`${line}\n`));
  const bus = new RedisEventBus(REDIS_URL);
  const writer = new ProjectEventWriter(bus, logger);
  const handle = await openDatabase({ url: databaseUrl, poolSize, applicationName: 'bench-event-writer' });
  return {
    /** Appends one event; `committedAt` is taken right after COMMIT, before the wake-up publish. */
    async write(project, type, payload) {
      let committedAt = 0;
      const event = await inTransaction(handle.db, async (uow) => {
        uow.afterCommit(() => {
          committedAt = nowMs();
        });
        return writer.record(uow, {
          project: { id: project.id, workspace_id: project.workspace_id },
          type,
          source: 'system',
          payload,
        });
      });
      return { sequence: event.sequence, committedAt };
    },
    async close() {
      await handle.close();
      await bus.close();
    },
  };
}

module.exports = { openEventWriter };
