import type { AppConfig } from '../config/app-config';
import { BullMqJobConsumer, BullMqJobQueue } from './bullmq-job-queue';
import { InProcessJobConsumer, InProcessJobQueue } from './in-process-job-queue';
import type { JobConsumer, JobConsumerOptions, JobQueue } from './jobs';

/** The producer of this process: BullMQ when `REDIS_URL` is set, in-process otherwise (like the bus). */
export function createJobQueue(
  config: AppConfig,
  onError: (error: unknown) => void = () => undefined,
): JobQueue {
  return config.redisUrl
    ? new BullMqJobQueue({ url: config.redisUrl, prefix: config.queuePrefix, onError })
    : new InProcessJobQueue();
}

/**
 * A consumer on the same transport as the process's queue: an in-process consumer must share the
 * broker of the queue it drains, a BullMQ one only needs the same Redis and prefix.
 */
export function createJobConsumer(
  queue: JobQueue,
  config: AppConfig,
  options: JobConsumerOptions,
  onError: (error: unknown) => void = () => undefined,
): JobConsumer {
  if (queue instanceof InProcessJobQueue) return new InProcessJobConsumer(queue.broker, options);
  if (!config.redisUrl) throw new Error('A BullMQ consumer needs REDIS_URL');
  return new BullMqJobConsumer({ url: config.redisUrl, prefix: config.queuePrefix, onError }, options);
}
