'use strict';
// P7 anchor, consumer side: a raw BullMQ `Worker` on the local Redis (bullmq-bench `worker-concurrent`
// style) with a no-op processor that records its start time, on the options Hearth's consumer uses
// (libs/platform/src/queue/bullmq-job-queue.ts: connection by URL, removeOnComplete/removeOnFail
// count 0, the given concurrency). The producer (`Queue.add`) is the bench process.
// argv[2]: JSON {redisUrl, prefix, queue, concurrency}
// IPC in:  {type: 'expect', round, count}: the next `count` completions form round `round`
//          (answered by {type: 'expecting', round}); {type: 'stop'}: close and exit.
// IPC out: {type: 'ready'}; {type: 'drained', round, at, first, starts?} once `count` jobs completed
//          (`at`: the last completion; `starts`: [jobId, processor start] when count <= 10).
const { Worker } = require('bullmq');
const { nowMs } = require('../lib/harness');

const { redisUrl, prefix, queue, concurrency } = JSON.parse(process.argv[2]);
const send = (message) => process.send(message);

const starts = new Map();
let expected = null;

const worker = new Worker(
  queue,
  async (job) => {
    starts.set(job.id, nowMs());
  },
  {
    connection: { url: redisUrl, maxRetriesPerRequest: null, connectionName: 'bench-p7-raw-worker' },
    prefix,
    concurrency,
    autorun: false,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  },
);
worker.on('error', (error) =>
  send({ type: 'error', error: String(error && error.stack ? error.stack : error) }),
);
worker.on('failed', (job, error) =>
  send({ type: 'error', error: `raw job ${job && job.id} failed: ${error}` }),
);
worker.on('completed', (job) => {
  const startedAt = starts.get(job.id);
  starts.delete(job.id);
  if (!expected) return;
  expected.done += 1;
  expected.first = Math.min(expected.first, startedAt);
  if (expected.keepStarts) expected.starts.push([job.id, startedAt]);
  if (expected.done === expected.count) {
    const { round, first } = expected;
    const message = { type: 'drained', round, at: nowMs(), first };
    if (expected.keepStarts) message.starts = expected.starts;
    expected = null;
    send(message);
  }
});

process.on('message', (message) => {
  if (message && message.type === 'expect') {
    expected = {
      round: message.round,
      count: message.count,
      done: 0,
      first: Infinity,
      keepStarts: message.count <= 10,
      starts: [],
    };
    send({ type: 'expecting', round: message.round });
  } else if (message && message.type === 'stop') {
    worker.close().finally(() => process.exit(0));
  }
});
process.on('SIGTERM', () => {
  worker.close().finally(() => process.exit(0));
});

void worker.run().catch((error) => send({ type: 'error', error: String(error) }));
worker.waitUntilReady().then(
  () => send({ type: 'ready' }),
  (error) => send({ type: 'error', error: String(error) }),
);
