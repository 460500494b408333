import { randomBytes } from 'node:crypto';
import { RedisEventBus } from '@hearth/platform';
import { REDIS_URL } from '../support/postgres-admin';

/** RedisEventBus on the real Redis: publishes of one microtask run go out together, one PUBLISH each. */
describe('RedisEventBus publish', () => {
  let publisher: RedisEventBus;
  let subscriber: RedisEventBus;
  const prefix = `hearth:test:bus:${randomBytes(4).toString('hex')}`;

  beforeAll(() => {
    publisher = new RedisEventBus(REDIS_URL);
    subscriber = new RedisEventBus(REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all([publisher.close(), subscriber.close()]);
  });

  async function listen(channels: string[]) {
    const received: string[] = [];
    const stops = await Promise.all(
      channels.map((channel) =>
        subscriber.subscribe(channel, (message) => received.push(`${channel} ${message}`)),
      ),
    );
    return { received, stop: () => Promise.all(stops.map((stop) => stop())) };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('delivers every publish of one tick, in call order, and resolves each once Redis took it', async () => {
    const channels = [`${prefix}:a`, `${prefix}:b`, `${prefix}:c`];
    const { received, stop } = await listen(channels);
    const sent = [
      [channels[0], '1'],
      [channels[1], '1'],
      [channels[0], '2'],
      [channels[2], '7'],
    ] as const;
    await Promise.all(sent.map(([channel, message]) => publisher.publish(channel, message)));
    await until(() => received.length === sent.length);
    expect(received).toEqual(sent.map(([channel, message]) => `${channel} ${message}`));
    await stop();
  });

  it('delivers a lone publish, and publishes of later ticks after those of earlier ones', async () => {
    const channel = `${prefix}:lone`;
    const { received, stop } = await listen([channel]);
    await publisher.publish(channel, '1');
    const later = publisher.publish(channel, '2');
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([later, publisher.publish(channel, '3'), publisher.publish(channel, '4')]);
    await until(() => received.length === 4);
    expect(received).toEqual(['1', '2', '3', '4'].map((m) => `${channel} ${m}`));
    await stop();
  });

  it('rejects the publishes of a closed bus instead of hanging', async () => {
    const bus = new RedisEventBus(REDIS_URL);
    await bus.close();
    const results = await Promise.allSettled([
      bus.publish(`${prefix}:x`, '1'),
      bus.publish(`${prefix}:x`, '2'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
