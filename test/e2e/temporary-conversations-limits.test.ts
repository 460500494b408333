import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { createTemporary } from './temporary-conversations-support';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

jest.setTimeout(60_000);

/**
 * Spec 2 temporary conversation respond, `generation_params` at the ends of their ranges: temperature
 * 0-2, top_p 0-1, max_output_tokens >= 1, max_context_tokens >= 1 (one past each end is refused in
 * temporary-conversations-turns.test.ts).
 */
describe('temporary conversations: generation_params at the limits', () => {
  let fake: FakeModelServer;
  let t: TestApp;
  let source: Awaited<ReturnType<typeof createSession>>;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
    source = await createSession(t, { body: { title: 'Source' } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const respond = (id: string, generationParams: Record<string, unknown>) =>
    t.http
      .post(`/temporary-conversations/${id}/respond`)
      .set('x-api-key', ADMIN_KEY)
      .send({ input_message: { role: 'user', content: 'x' }, generation_params: generationParams });
  /** The body the model received for the last call (OpenAI wire format). */
  const sentBody = () => fake.requests.at(-1)!.body as Record<string, unknown>;

  it.each([
    ['temperature 0', { temperature: 0 }, { temperature: 0 }],
    ['temperature 2', { temperature: 2 }, { temperature: 2 }],
    ['top_p 0', { top_p: 0 }, { top_p: 0 }],
    ['top_p 1', { top_p: 1 }, { top_p: 1 }],
  ])('%s is accepted and reaches the model', async (_name, params, expected) => {
    const c = await createTemporary(t, { sessionId: source.id });
    fake.script({ reply: 'ok' });
    const res = await respond(c.id, params);
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
    expect(res.body.data).toMatchObject({ generated_text: 'ok', final_state: 'committed' });
    expect(fake.requests).toHaveLength(1);
    expect(sentBody()).toMatchObject(expected);
  });

  it('max_output_tokens 1 is accepted and is the call’s output limit', async () => {
    const c = await createTemporary(t, { sessionId: source.id });
    fake.script({ reply: 'o' });
    const res = await respond(c.id, { max_output_tokens: 1 });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
    expect(res.body.data.final_state).toBe('committed');
    const body = sentBody();
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(1);
  });

  it('max_context_tokens 1 is accepted: the turn runs and the input message is stored', async () => {
    const c = await createTemporary(t, { sessionId: source.id });
    fake.script({ reply: 'tiny' });
    const res = await respond(c.id, { max_context_tokens: 1 });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
    expect(res.body.data).toMatchObject({ generated_text: 'tiny', final_state: 'committed' });
    expect(fake.requests).toHaveLength(1);
    // A one-token history budget leaves no room for history (SillyTavern's budgeting: the input message
    // is history too); the input is still appended to the conversation before generation.
    expect(fake.requests[0].messages.some((m) => m.content === 'x')).toBe(false);
    const transcript = await t.http
      .get(`/temporary-conversations/${c.id}/transcript`)
      .set('x-api-key', ADMIN_KEY)
      .expect(200);
    const texts = JSON.stringify(transcript.body.data.floors);
    expect(texts).toContain('"content":"x"');
    expect(texts).toContain('"content":"tiny"');
    // max_context_tokens bounds the prompt; it is not a parameter of the provider call.
    expect(sentBody()).not.toHaveProperty('max_context_tokens');
  });

  it('every limit at once is accepted', async () => {
    const c = await createTemporary(t, { sessionId: source.id });
    fake.script({ reply: 'all' });
    const res = await respond(c.id, {
      temperature: 2,
      top_p: 0,
      max_output_tokens: 1,
      max_context_tokens: 1,
      reasoning_effort: 'r'.repeat(64),
    });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
    expect(res.body.data.generated_text).toBe('all');
  });
});
