import { type EventBus, InProcessEventBus, JsonLogger } from '@hearth/platform';
import { ProjectEventWriter, projectEventsChannel } from './project-event-writer';

/** A bus whose publishes settle only when the test says so. */
class HeldBus implements EventBus {
  readonly kind = 'redis' as const;
  readonly sent: Array<{ channel: string; message: string; settle: (error?: Error) => void }> = [];
  throwOnPublish: Error | null = null;

  publish(channel: string, message: string): Promise<void> {
    if (this.throwOnPublish) throw this.throwOnPublish;
    return new Promise<void>((resolve, reject) => {
      this.sent.push({ channel, message, settle: (error) => (error ? reject(error) : resolve()) });
    });
  }
  async subscribe(): Promise<() => Promise<void>> {
    return async () => undefined;
  }
  onResync(): () => void {
    return () => undefined;
  }
  async isHealthy(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ProjectEventWriter.wake', () => {
  const lines: string[] = [];
  const logger = new JsonLogger('warn', (line) => lines.push(line));
  beforeEach(() => (lines.length = 0));

  it('sends the publish at once and resolves without waiting for the bus to acknowledge it', async () => {
    const bus = new HeldBus();
    const writer = new ProjectEventWriter(bus, logger);
    let resolved = false;
    const woken = writer.wake('prj_1', 7).then(() => (resolved = true));
    // Sent synchronously, before the caller answers.
    expect(bus.sent).toEqual([
      expect.objectContaining({ channel: projectEventsChannel('prj_1'), message: '7' }),
    ]);
    await woken;
    expect(resolved).toBe(true);
    bus.sent[0].settle();
    await flush();
    expect(lines).toEqual([]);
  });

  it('logs a publish that fails later, without throwing to the caller', async () => {
    const bus = new HeldBus();
    const writer = new ProjectEventWriter(bus, logger);
    await expect(writer.wake('prj_2', 3)).resolves.toBeUndefined();
    bus.sent[0].settle(new Error('redis went away'));
    await flush();
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'event wake-up publish failed; readers will catch up',
        project_id: 'prj_2',
        error: 'Error: redis went away',
        context: 'ProjectEventWriter',
      }),
    ]);
  });

  it('logs a publish that throws at once, without throwing to the caller', async () => {
    const bus = new HeldBus();
    bus.throwOnPublish = new Error('not connected');
    const writer = new ProjectEventWriter(bus, logger);
    await expect(writer.wake('prj_3', 1)).resolves.toBeUndefined();
    await flush();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ project_id: 'prj_3', error: 'Error: not connected' });
  });

  it('delivers the wake-up to a subscriber of the Project channel', async () => {
    const bus = new InProcessEventBus();
    const received: string[] = [];
    await bus.subscribe(projectEventsChannel('prj_4'), (message) => received.push(message));
    await new ProjectEventWriter(bus, logger).wake('prj_4', 12);
    await flush();
    expect(received).toEqual(['12']);
    await bus.close();
  });
});
