import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  type FakeModelServer,
} from './turns-support';

/** Embedded mode (PGlite, in-process bus): the same turn and detached-run code paths. */
describe('turns: embedded mode', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake, { embedded: true });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('responds, retries, and replays a detached run after its client left', async () => {
    const session = await createSession(t);
    const res = await t.http
      .post(`/sessions/${session.id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ message: 'hi' });
    expect(res.status).toBe(200);
    expect(res.body.data.generated_text).toBe('ECHO: hi');
    const retry = await t.http
      .post(`/floors/${res.body.data.floor_id}/retry`)
      .set('x-api-key', ADMIN_KEY)
      .send({});
    expect(retry.status).toBe(200);
    expect((await floorsOf(t, session.id))[0].pages.filter((p) => p.page_kind === 'output')).toHaveLength(2);

    fake.script({ chunks: ['a ', 'b ', 'c ', 'd '], chunkDelayMs: 80 });
    const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
      message: 'go',
      detach: true,
    });
    await call.waitFor((c) => c.types.includes('chunk'), 10_000, 'a chunk');
    call.drop();
    const seen = [...call.messages];
    const runId = JSON.parse(seen[0].data).run_id as string;
    const again = await SseCall.open(t, 'GET', `/runs/${runId}/events`, undefined, {
      'last-event-id': seen.at(-1)!.id!,
    });
    await again.waitForEnd();
    const all = [...seen, ...again.messages];
    expect(all.map((m) => Number(m.id))).toEqual(all.map((_, i) => i + 1));
    expect(again.types.at(-1)).toBe('done');
    expect(JSON.parse(again.messages.at(-1)!.data).generated_text).toBe('a b c d ');
  });
});
