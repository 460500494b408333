import { toAnthropicMessages, toGeminiContents, type LlmMessage } from '@hearth/platform';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import {
  floorsOf,
  SseCall,
  startFakeModelServer,
  startTurnsApp,
  type FakeModelServer,
  type Provider,
} from './turns-support';

/** What the fake server records for a prompt after each protocol's system/turn mapping. */
function onTheWire(provider: Provider, messages: LlmMessage[]) {
  if (provider === 'anthropic') {
    const { system, turns } = toAnthropicMessages(messages);
    return [...(system ? [{ role: 'system', content: system }] : []), ...turns];
  }
  if (provider === 'google') {
    const { systemInstruction, contents } = toGeminiContents(messages);
    return [
      ...(systemInstruction ? [{ role: 'system', content: systemInstruction }] : []),
      ...contents.map((c) => ({
        role: c.role === 'model' ? 'assistant' : 'user',
        content: c.parts.map((p) => p.text).join(''),
      })),
    ];
  }
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

/** Parameters each provider has no field for: reported in the trace, never sent (docs "Turns and runs"). */
const UNSUPPORTED: Record<Provider, string[]> = {
  openai: ['top_k'],
  deepseek: ['reasoning_effort', 'top_k'],
  xai: ['top_k'],
  'openai-compatible': [],
  anthropic: ['frequency_penalty'],
  google: [],
};

const PARAMS = {
  temperature: 0.5,
  top_k: 5,
  frequency_penalty: 0.1,
  reasoning_effort: 'low',
  max_output_tokens: 64,
};

/**
 * Every provider kind through the real SDK against the fake model server (issue 5 item 4): the prompt
 * that reaches the model is the dry-run's `messages` for the same state, reasoning is captured into
 * `reasoning_text`, usage is recorded, unsupported parameters are reported in the trace.
 */
describe.each<Provider>(['openai', 'deepseek', 'xai', 'openai-compatible', 'anthropic', 'google'])(
  'turns through the %s provider',
  (provider) => {
    let fake: FakeModelServer;
    let t: TestApp;

    beforeAll(async () => {
      fake = await startFakeModelServer();
      t = await startTurnsApp(fake, { provider });
    }, 60_000);
    afterAll(async () => {
      await t.close();
      await fake.close();
    });

    it('sends the dry-run prompt, streams, captures reasoning and usage, reports unsupported params', async () => {
      const session = await createSession(t);
      const first = await t.http
        .post(`/sessions/${session.id}/respond`)
        .set('x-api-key', ADMIN_KEY)
        .send({ message: 'one' });
      expect(first.status).toBe(200);

      const dry = await t.http
        .post(`/sessions/${session.id}/respond/dry-run`)
        .set('x-api-key', ADMIN_KEY)
        .send({ message: 'two' });
      expect(dry.status).toBe(200);
      fake.reset();
      fake.script({
        chunks: ['Fine ', 'answer'],
        reasoning: 'hmm, ok',
        usage: { prompt_tokens: 30, completion_tokens: 2 },
      });
      const call = await SseCall.open(t, 'POST', `/sessions/${session.id}/respond/stream`, {
        message: 'two',
        generation_params: PARAMS,
        debug_options: { include_runtime_trace: true },
      });
      await call.waitForEnd();
      expect(call.types.at(-1)).toBe('done');
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0].stream).toBe(true);
      expect(fake.requests[0].messages).toEqual(onTheWire(provider, dry.body.data.messages));

      const done = call.dataOf<Record<string, any>>('done')[0];
      expect(done.generated_text).toBe('Fine answer');
      expect(done.reasoning_text).toBe('hmm, ok');
      expect(done.total_usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 2 });
      expect(
        call
          .dataOf<{ delta: string }>('reasoning')
          .map((r) => r.delta)
          .join(''),
      ).toBe('hmm, ok');
      expect([...done.runtime_trace.provider.unsupported_params].sort()).toEqual(UNSUPPORTED[provider]);
      for (const name of UNSUPPORTED[provider])
        expect(JSON.stringify(fake.requests[0].body)).not.toContain(`"${name}"`);

      const floors = await floorsOf(t, session.id);
      expect(floors[1]).toMatchObject({
        reasoning_text: 'hmm, ok',
        token_in: 30,
        token_out: 2,
        state: 'committed',
      });
    });
  },
);
