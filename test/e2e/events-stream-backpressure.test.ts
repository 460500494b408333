import { sql } from 'kysely';
import { ProjectEventStream, type EventStreamSink, type StreamedEvent } from '@hearth/app';
import { projectEventsRepository, type ProjectRow } from '@hearth/persistence';
import { appendEventBatch, appendEvents } from '../support/factories/events';
import { createProject } from '../support/factories/projects';
import { waitFor } from '../support/poll';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A client whose socket buffer is full: loopback sockets absorb megabytes, so the full buffer is
 * played by a sink that refuses writes on demand. The stream must stop writing, ignore batches while
 * blocked, and catch up from Postgres on drain, with every sequence exactly once.
 */
class ScriptedSink implements EventStreamSink {
  readonly sent: number[] = [];
  /** Each `send` call: the events it carried (one chunk on the wire). */
  readonly writes: Array<readonly StreamedEvent[]> = [];
  full = false;
  /** Every write fills the buffer (a client slower than the server), until the next drain. */
  fillOnEveryWrite = false;
  ended = false;
  failure: { code: string; message: string } | null = null;
  private drain: (() => void) | null = null;
  private close: (() => void) | null = null;

  send(events: readonly StreamedEvent[]): boolean {
    this.writes.push(events);
    for (const event of events) this.sent.push(event.sequence);
    if (this.fillOnEveryWrite) this.full = true;
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

/** `count` events appended in one statement (a long log to catch up on), with their counter row. */
async function appendLongLog(t: TestApp, project: ProjectRow, count: number): Promise<void> {
  const db = t.resources.database.db;
  await sql`
    INSERT INTO project_events (id, workspace_id, project_id, sequence, type, visibility, source, payload, created_at)
    SELECT 'evt_long' || ${project.id} || lpad(g::text, 8, '0'), ${project.workspace_id}, ${project.id}, g,
      'test.replayed', 'project', 'system', jsonb_build_object('n', g), ${Date.now()}::bigint + g
    FROM generate_series(1, ${count}::int) AS g`.execute(db);
  await sql`INSERT INTO project_event_counters (project_id, last_sequence) VALUES (${project.id}, ${count})`.execute(
    db,
  );
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

  it('stops at a full buffer during replay and hands over to live batches after the drain', async () => {
    await appendEvents(t, project, 10);
    const sink = new ScriptedSink();
    sink.full = true;
    const stream = new ProjectEventStream(t.resources.database.db, filter(), 0, () => undefined);
    stream.start(sink);
    // The replay page is written as one chunk, which reports the buffer full: nothing more is sent.
    await waitFor(() => sink.sent.length === 10, 'the first write');
    expect(sink.writes).toHaveLength(1);
    // Live events committed while the stream waits for the drain are held, not written.
    const live = await appendEventBatch(t, project, [{}, {}, {}]);
    stream.deliver(batchOf(live, 10));
    await new Promise((r) => setTimeout(r, 100));
    expect(sink.sent).toEqual(range(1, 10));
    sink.emitDrain();
    await waitFor(() => sink.sent.length === 13, 'the live events after the drain');
    expect(sink.sent).toEqual(range(1, 13));
  });

  it('catches up a page per write, waits for each drain, and never reads a row twice', async () => {
    await appendLongLog(t, project, 2100);
    const sink = new ScriptedSink();
    sink.fillOnEveryWrite = true;
    const reads = jest.spyOn(projectEventsRepository, 'listStreamAfter');
    try {
      const stream = new ProjectEventStream(t.resources.database.db, filter(), 0, () => undefined);
      stream.start(sink);
      await waitFor(() => sink.writes.length === 1, 'the first page');
      await new Promise((r) => setTimeout(r, 150));
      // Paused on the full buffer: one page written (the next one may be read ahead, not written).
      expect(sink.sent).toEqual(range(1, 1000));
      sink.emitDrain();
      await waitFor(() => sink.writes.length === 2, 'the second page');
      expect(sink.sent).toEqual(range(1, 2000));
      sink.emitDrain();
      await waitFor(() => sink.writes.length === 3, 'the last page');
      expect(sink.sent).toEqual(range(1, 2100));
      expect(sink.writes.map((w) => w.length)).toEqual([1000, 1000, 100]);
      // Three pages, three reads: waiting for a drain never makes the stream read again.
      const ownReads = reads.mock.calls.filter(([, q]) => q.projectId === project.id);
      expect(ownReads.map(([, q]) => q.after)).toEqual([0, 1000, 2000]);
      sink.emitClose();
      expect(stream.isClosed).toBe(true);
    } finally {
      reads.mockRestore();
    }
  });

  it('filters a shared batch once per filter and writes it to each stream as one chunk', async () => {
    const streams = [0, 1, 2].map((i) => {
      const sink = new ScriptedSink();
      const stream = new ProjectEventStream(
        t.resources.database.db,
        { ...filter(), types: i === 2 ? ['kept.type'] : [] },
        0,
        () => undefined,
      );
      stream.start(sink);
      return { sink, stream };
    });
    // Every stream has finished its first read (a slow machine can take longer than any fixed wait), so
    // the batch below is applied as delivered, not read again by a catch-up.
    const reading = (stream: ProjectEventStream) => (stream as unknown as { reading: boolean }).reading;
    await waitFor(() => streams.every(({ stream }) => !reading(stream)), 'the streams’ first reads');
    const rows = await appendEventBatch(t, project, [{ type: 'kept.type' }, {}, { type: 'kept.type' }]);
    const batch = batchOf(rows, 0);
    for (const { stream } of streams) stream.deliver(batch);
    const [a, b, c] = streams.map((s) => s.sink);
    expect(a.writes).toHaveLength(1);
    expect(a.writes[0]).toBe(b.writes[0]); // the same array: its SSE chunk is built once
    expect(a.sent).toEqual([1, 2, 3]);
    expect(c.writes).toHaveLength(1);
    expect(c.sent).toEqual([1, 3]);
    for (const { sink } of streams) sink.emitClose();
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
