import { randomBytes } from 'node:crypto';
import {
  BullMqJobConsumer,
  BullMqJobQueue,
  InProcessJobConsumer,
  InProcessJobQueue,
  type JobConsumer,
  type JobQueue,
} from '@hearth/platform';
import { REDIS_URL } from '../support/postgres-admin';
import { waitFor } from '../support/poll';
import { freePort } from '../support/private-services';
import { deleteQueueKeys } from '../support/private-redis';

jest.setTimeout(60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Transport {
  queue: JobQueue;
  consumer: JobConsumer;
  cleanup?: () => Promise<void>;
}

const TRANSPORTS: Array<[string, () => Transport]> = [
  [
    'bullmq',
    () => {
      const settings = { url: REDIS_URL, prefix: `hearth-test-${randomBytes(4).toString('hex')}` };
      return {
        queue: new BullMqJobQueue(settings),
        consumer: new BullMqJobConsumer(settings, { queues: ['system'] }),
        cleanup: () => deleteQueueKeys(REDIS_URL, settings.prefix),
      };
    },
  ],
  [
    'in-process',
    () => {
      const queue = new InProcessJobQueue();
      return { queue, consumer: new InProcessJobConsumer(queue.broker, { queues: ['system'] }) };
    },
  ],
];

describe.each(TRANSPORTS)('job transport (%s)', (_name, make) => {
  let t: Transport;
  const seen: Array<{ jobId: string; at: number; signal: AbortSignal }> = [];
  let hold: Promise<void> = Promise.resolve();
  const redeliverOnce = new Set<string>();

  beforeAll(async () => {
    t = make();
    t.consumer.register('system.ping', async (payload, delivery) => {
      expect(delivery.jobId).toBe(payload.job_id);
      seen.push({ jobId: payload.job_id, at: Date.now(), signal: delivery.signal });
      await hold;
      if (redeliverOnce.delete(payload.job_id)) return { redeliverAt: Date.now() + 300 };
    });
    await t.consumer.start();
  });

  afterAll(async () => {
    await t.consumer.close(1000);
    await t.queue.close();
    await t.cleanup?.();
  });

  const id = () => `job_${randomBytes(6).toString('hex')}`;

  it('delivers a typed payload under the given id; has() tells whether the queue still holds it', async () => {
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const jobId = id();
    await t.queue.enqueue('system.ping', { job_id: jobId }, { jobId });
    await waitFor(() => seen.some((s) => s.jobId === jobId), 'delivery');
    expect(await t.queue.has('system.ping', jobId)).toBe(true); // active
    release();
    hold = Promise.resolve();
    await waitFor(async () => !(await t.queue.has('system.ping', jobId)), 'removal after completion');
    expect(await t.queue.has('system.ping', 'job_never_added')).toBe(false);
  });

  it('does not add an id the queue still holds', async () => {
    const jobId = id();
    await t.queue.enqueue('system.ping', { job_id: jobId }, { jobId, delayMs: 400 });
    await t.queue.enqueue('system.ping', { job_id: jobId }, { jobId, delayMs: 400 });
    expect(await t.queue.has('system.ping', jobId)).toBe(true); // delayed
    await waitFor(() => seen.some((s) => s.jobId === jobId), 'delivery');
    await sleep(300);
    expect(seen.filter((s) => s.jobId === jobId)).toHaveLength(1);
  });

  it('delivers the same entry again at the time a handler asks for', async () => {
    const jobId = id();
    redeliverOnce.add(jobId);
    await t.queue.enqueue('system.ping', { job_id: jobId }, { jobId });
    await waitFor(() => seen.filter((s) => s.jobId === jobId).length === 2, 'redelivery');
    const [first, second] = seen.filter((s) => s.jobId === jobId);
    expect(second.at - first.at).toBeGreaterThanOrEqual(250);
  });

  // Last of this block: it closes the consumer (afterAll closes it again, which is bounded too).
  it('close stops waiting after the grace: hands the jobs back, aborts them, and returns even when a handler ignores its signal', async () => {
    let release!: () => void;
    hold = new Promise((r) => (release = r)); // ignores its signal: ends only when released below
    const jobId = id();
    await t.queue.enqueue('system.ping', { job_id: jobId }, { jobId });
    await waitFor(() => seen.some((s) => s.jobId === jobId), 'delivery');

    const handedBack: number[] = [];
    const started = Date.now();
    const finished = await t.consumer.close(300, async () => {
      handedBack.push(Date.now() - started);
    });
    const took = Date.now() - started;
    release();
    hold = Promise.resolve();

    expect(finished).toBe(false);
    expect(handedBack).toHaveLength(1);
    expect(handedBack[0]).toBeGreaterThanOrEqual(250);
    expect(seen.find((s) => s.jobId === jobId)!.signal.aborted).toBe(true);
    // The grace, then at most the short wait for aborted handlers (2 s), then the connections drop.
    expect(took).toBeLessThan(10_000);
  });
});

describe('BullMQ producer with Redis down', () => {
  it('fails fast instead of hanging the caller', async () => {
    const port = await freePort(); // nothing listens there
    const queue = new BullMqJobQueue({ url: `redis://127.0.0.1:${port}`, prefix: 'hearth-test-down' });
    try {
      const started = Date.now();
      await expect(queue.enqueue('system.ping', { job_id: 'job_x' }, { jobId: 'job_x' })).rejects.toThrow(
        /unreachable/,
      );
      await expect(queue.has('system.ping', 'job_x')).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await queue.close();
      // ioredis keeps a 2 s timer after disconnecting a socket that never connected
      // (AbstractConnector.disconnect): let it run out, so this file leaves nothing running for the
      // jest worker to be force-exited over.
      await sleep(2_100);
    }
  });
});
