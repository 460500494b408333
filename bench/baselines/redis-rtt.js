'use strict';
// P3 anchor part: one Redis PUBLISH -> subscriber round trip on the local Redis, `count` messages at
// `intervalMs`, on a channel of the bench's own name space.
// argv[2]: JSON {redisUrl, channel, count, intervalMs}
const { Redis } = require('ioredis');
const { nowMs, runChild, summarize, sleep } = require('../lib/harness');

runChild(async () => {
  const { redisUrl, channel, count, intervalMs } = JSON.parse(process.argv[2]);
  const publisher = new Redis(redisUrl, { connectionName: 'bench-rtt-pub' });
  const subscriber = new Redis(redisUrl, { connectionName: 'bench-rtt-sub' });
  const latencies = [];
  subscriber.on('message', (_channel, message) => latencies.push(nowMs() - Number(message)));
  await subscriber.subscribe(channel);
  for (let i = 0; i < count; i++) {
    await publisher.publish(channel, String(nowMs()));
    await sleep(intervalMs);
  }
  await sleep(200);
  await subscriber.quit();
  await publisher.quit();
  return { type: 'result', latency: summarize(latencies), lost: count - latencies.length };
});
