import { createAccountCaller, type Caller } from '../support/factories/members';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  runRow,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  until,
  type FakeModelServer,
} from './turns-support';

/**
 * Detached runs (issue 5 item 3, beyond the spec): a run started with `detach: true` keeps generating
 * when its client goes away, and any client reattaches from any API replica with Last-Event-ID,
 * receiving every missed event once, in order, then live until `done`.
 */
describe('turns: detached runs across API instances', () => {
  let fake: FakeModelServer;
  let first: TestApp;
  let second: TestApp;
  let stranger: Caller;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    first = await startTurnsApp(fake);
    second = await startTurnsApp(fake, { database: first.database! });
    stranger = await createAccountCaller(first, { name: 'Stranger' });
  }, 60_000);
  afterAll(async () => {
    await second.close();
    await first.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const chunks = Array.from({ length: 12 }, (_, i) => `c${i} `);

  it('keeps generating after the client leaves; a reattach on the other replica replays the rest with no gap or repeat', async () => {
    const session = await createSession(first);
    fake.script({ chunks, chunkDelayMs: 60 });
    const call = await SseCall.open(first, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'detach me',
      detach: true,
    });
    await call.waitFor((c) => c.types.filter((x) => x === 'chunk').length >= 3, 10_000, 'three chunks');
    call.drop();
    const seen = [...call.messages];
    const runId = JSON.parse(seen[0].data).run_id as string;
    const lastId = seen.at(-1)!.id!;

    const again = await SseCall.open(second, 'GET', `/runs/${runId}/events`, undefined, {
      'last-event-id': lastId,
    });
    expect(again.status).toBe(200);
    await again.waitForEnd(20_000);
    const ids = [...seen, ...again.messages].map((m) => Number(m.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(again.types.at(-1)).toBe('done');
    const all = [...seen, ...again.messages];
    const text = all
      .filter((m) => m.event === 'chunk')
      .map((m) => JSON.parse(m.data).chunk)
      .join('');
    expect(text).toBe(chunks.join(''));
    expect(JSON.parse(again.messages.at(-1)!.data)).toMatchObject({
      generated_text: chunks.join(''),
      final_state: 'committed',
    });
    // The upstream call was never aborted.
    expect(fake.requests[0].clientClosed).toBe(false);
    expect((await floorsOf(first, session.id))[0].state).toBe('committed');

    // A full replay from the start, on either replica, gives the same events.
    const replay = await SseCall.open(first, 'GET', `/runs/${runId}/events`);
    await replay.waitForEnd();
    expect(replay.messages).toEqual(all);
    const snapshot = await second.http.get(`/runs/${runId}`).set('x-api-key', ADMIN_KEY);
    expect(snapshot.status).toBe(200);
    expect(snapshot.body.data).toMatchObject({
      run_id: runId,
      status: 'completed',
      detached: true,
      last_event_id: all.length,
      pending_output: { state: 'complete', text: chunks.join('') },
    });
  });

  it('a detached JSON turn answers 202 with the run; it is followed live from the other replica', async () => {
    const session = await createSession(first);
    fake.script({ chunks: ['x', 'y', 'z'], chunkDelayMs: 150 });
    const res = await first.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'background', detach: true });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ status: 'running', detached: true, run_type: 'respond' });
    const runId = res.body.data.run_id as string;
    const live = await SseCall.open(second, 'GET', `/runs/${runId}/events`);
    await live.waitForEnd(15_000);
    expect(live.types[0]).toBe('start');
    expect(live.types.at(-1)).toBe('done');
    expect(live.messages.map((m) => Number(m.id))).toEqual(live.messages.map((_, i) => i + 1));
    expect(await runRow(first, runId)).toMatchObject({ status: 'completed' });
  });

  it('a detached run can be cancelled from the other replica', async () => {
    const session = await createSession(first);
    fake.script({ hang: true });
    const res = await first.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'cancel me', detach: true });
    const runId = res.body.data.run_id as string;
    await until(() => fake.requests.length > 0, 5000, 'the model call');
    const cancel = await second.http.post(`/runs/${runId}/cancel`).set('x-api-key', ADMIN_KEY);
    expect(cancel.status).toBe(202);
    await until(async () => (await runRow(first, runId))?.status === 'cancelled', 10_000, 'the cancellation');
    const events = await SseCall.open(second, 'GET', `/runs/${runId}/events`);
    await events.waitForEnd();
    expect(events.types.at(-1)).toBe('error');
    expect(events.dataOf('error').at(-1)).toMatchObject({ code: 'generation_cancelled' });
    expect(await floorsOf(first, session.id)).toEqual([]);
  });

  it('run routes: 404 run_not_found for missing and foreign runs, 409 run_not_detached, 400 bad Last-Event-ID', async () => {
    const session = await createSession(first);
    const res = await first.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'plain' });
    const runId = res.body.data.run_id as string;
    const get = await first.http.get(`/runs/${runId}`).set('x-api-key', ADMIN_KEY);
    expect(get.status).toBe(200);
    expect(get.body.data).toMatchObject({ status: 'completed', detached: false });

    for (const path of [`/runs/run_missing`, `/runs/${runId}`]) {
      const key = path.endsWith(runId) ? stranger.apiKey : ADMIN_KEY;
      const r = await first.http.get(path).set('x-api-key', key);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('run_not_found');
    }
    const foreignCancel = await first.http.post(`/runs/${runId}/cancel`).set('x-api-key', stranger.apiKey);
    expect(foreignCancel.status).toBe(404);
    const foreignEvents = await SseCall.open(first, 'GET', `/runs/${runId}/events`, undefined, {
      'x-api-key': stranger.apiKey,
    });
    expect(foreignEvents.status).toBe(404);

    const notDetached = await SseCall.open(first, 'GET', `/runs/${runId}/events`);
    expect(notDetached.status).toBe(409);
    await notDetached.waitForEnd();
    expect(JSON.parse(notDetached.body).error.code).toBe('run_not_detached');
    const bad = await SseCall.open(first, 'GET', `/runs/${runId}/events`, undefined, {
      'last-event-id': 'abc',
    });
    expect(bad.status).toBe(400);
  });
});
