import { ProjectEventStream, type EventStreamSink, type StreamedEvent } from '@hearth/app';
import type { ProjectRow } from '@hearth/persistence';
import { appendEventBatch, appendEvents } from '../support/factories/events';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A client whose socket buffer is full: loopback sockets absorb megabytes, so the full buffer is
 * played by a sink that refuses writes on demand. The stream must stop writing, ignore batches while
 * blocked, and catch up from Postgres on drain, with every sequence exactly once.
 */
class ScriptedSink implements EventStreamSink {
  readonly sent: number[] = [];
  full = false;
  ended = false;
  failure: { code: string; message: string } | null = null;
  private drain: (() => void) | null = null;
  private close: (() => void) | null = null;

  send(event: StreamedEvent): boolean {
    this.sent.push(event.sequence);
    return !this.full;
  }
  fail(code: string, message: string): void {
    this.failure = { code, message };
    this.ended = true;
  }
  end(): void {
    this.ended = true;
  }
  onDrain(listener: () => void): void {
    this.drain = listener;
  }
  onClose(listener: () => void): void {
    this.close = listener;
  }
  emitDrain(): void {
    this.full = false;
    this.drain?.();
  }
  emitClose(): void {
    this.close?.();
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('event stream back-pressure', () => {
  let t: TestApp;
  let project: ProjectRow;
  const filter = () => ({
    projectId: project.id,
    visibilities: ['project', 'owner'] as Array<'project' | 'owner'>,
    types: [],
    sessionId: null,
  });
  const batchOf = (
    rows: Array<{ sequence: number; type: string; visibility: string; session_id: string | null }>,
    from: number,
  ): {
    from: number;
    to: number;
    events: StreamedEvent[];
  } => ({
    from,
    to: rows[rows.length - 1].sequence,
    events: rows.map((r) => ({
      sequence: r.sequence,
      type: r.type,
      visibility: r.visibility as StreamedEvent['visibility'],
      sessionId: r.session_id,
      data: '{}',
    })),
  });

  beforeAll(async () => {
    t = await startTestApp();
  });
  beforeEach(async () => {
    project = await createProject(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('stops at a full buffer during replay and resumes from the log on drain', async () => {
    await appendEvents(t, project, 10);
    const sink = new ScriptedSink();
    sink.full = true;
    const stream = new ProjectEventStream(t.resources.database.db, filter(), 0, () => undefined);
    stream.start(sink);
    // The first write is accepted into the buffer but reports it full: the replay stops there.
    await waitFor(() => sink.sent.length === 1, 'the first write');
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.sent).toEqual([1]);
    sink.emitDrain();
    await waitFor(() => sink.sent.length === 10, 'the rest of the replay');
    expect(sink.sent).toEqual(range(1, 10));
  });

  it('ignores batches while blocked and reads what it skipped when drained', async () => {
    const sink = new ScriptedSink();
    const stream = new ProjectEventStream(t.resources.database.db, filter(), 0, () => undefined);
    stream.start(sink);
    // Let the initial (empty) replay finish, so batches are applied as they come.
    await new Promise((r) => setTimeout(r, 100));
    const first = await appendEventBatch(t, project, [{}, {}, {}]);
    stream.deliver(batchOf(first, 0));
    expect(sink.sent).toEqual([1, 2, 3]);

    sink.full = true;
    const second = await appendEventBatch(t, project, [{}, {}]);
    stream.deliver(batchOf(second, 3)); // written, then the buffer reports full
    expect(sink.sent).toEqual([1, 2, 3, 4, 5]);
    const third = await appendEventBatch(t, project, [{}, {}, {}]);
    stream.deliver(batchOf(third, 5)); // blocked: not written
    expect(sink.sent).toEqual([1, 2, 3, 4, 5]);

    sink.emitDrain();
    await waitFor(() => sink.sent.length === 8, 'the catch-up after drain');
    expect(sink.sent).toEqual(range(1, 8));
  });

  it('reads the gap itself when a batch does not follow on from its position', async () => {
    const sink = new ScriptedSink();
    const stream = new ProjectEventStream(t.resources.database.db, filter(), 0, () => undefined);
    stream.start(sink);
    await new Promise((r) => setTimeout(r, 50));
    const rows = await appendEventBatch(t, project, [{}, {}, {}, {}]);
    // Only the last two reach the stream as a batch (the wake-up for the first two was lost).
    stream.deliver(batchOf(rows.slice(2), 2));
    await waitFor(() => sink.sent.length === 4, 'the gap to be read');
    expect(sink.sent).toEqual(range(1, 4));
    // A stale or repeated batch changes nothing.
    stream.deliver(batchOf(rows, 0));
    expect(sink.sent).toEqual(range(1, 4));
    sink.emitClose();
    expect(stream.isClosed).toBe(true);
  });
});
