import {
  createLlmClient,
  LlmError,
  type LlmStreamEvent,
  type LlmTarget,
  type ProviderKind,
} from '@hearth/platform';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';

/**
 * The LLM adapters (libs/platform/src/llm) through the real SDKs against the fake model server: every
 * provider, JSON and streamed replies, reasoning, usage, parameter mapping, and each failure kind.
 */
describe('LLM client', () => {
  let fake: FakeModelServer;
  const llm = createLlmClient();
  const KEY = 'sk-secret-test-key-0123456789';

  beforeAll(async () => {
    fake = await startFakeModelServer();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const target = (provider: ProviderKind): LlmTarget => ({
    provider,
    model: 'fake-model',
    apiKey: KEY,
    baseUrl: provider === 'anthropic' || provider === 'google' ? fake.url : fake.openaiBaseUrl,
  });
  const messages = [
    { role: 'system' as const, content: 'You are terse.' },
    { role: 'assistant' as const, content: 'Hello.' },
    { role: 'user' as const, content: 'Say something' },
  ];
  const providers: ProviderKind[] = ['openai', 'deepseek', 'xai', 'openai-compatible', 'anthropic', 'google'];

  it.each(providers)('%s: a JSON reply with usage, the prompt as sent', async (provider) => {
    const result = await llm.generate({
      target: target(provider),
      messages,
      params: { temperature: 0.5 },
      stream: false,
    });
    expect(result.text).toBe('ECHO: Say something');
    expect(result.usage?.total_tokens).toBeGreaterThan(0);
    const seen = fake.requests[0].messages;
    expect(seen[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(seen.at(-1)).toEqual({ role: 'user', content: 'Say something' });
    expect(seen.map((m) => m.role)).toContain('assistant');
  });

  it.each(providers)('%s: a streamed reply arrives in order, reasoning apart', async (provider) => {
    fake.script({ chunks: ['one ', 'two ', 'three'], reasoning: 'because' });
    const events: LlmStreamEvent[] = [];
    const result = await llm.generate({
      target: target(provider),
      messages,
      params: {},
      stream: true,
      onEvent: (e) => events.push(e),
    });
    expect(result.text).toBe('one two three');
    expect(result.reasoning_text).toBe('because');
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => e.text)
        .join(''),
    ).toBe('one two three');
    expect(
      events
        .filter((e) => e.type === 'reasoning')
        .map((e) => e.text)
        .join(''),
    ).toBe('because');
    expect(fake.requests[0].stream).toBe(true);
  });

  it('maps parameters per provider and reports the ones a provider lacks', async () => {
    const params = {
      temperature: 0.7,
      top_p: 0.9,
      top_k: 40,
      max_output_tokens: 55,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
    };
    const openai = await llm.generate({ target: target('openai'), messages, params, stream: false });
    expect(openai.unsupported_params).toEqual(['top_k']);
    expect(fake.requests[0].body).toMatchObject({
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 55,
      frequency_penalty: 0.1,
    });
    expect((fake.requests[0].body as Record<string, unknown>).top_k).toBeUndefined();
    const anthropic = await llm.generate({ target: target('anthropic'), messages, params, stream: false });
    expect(anthropic.unsupported_params.sort()).toEqual(['frequency_penalty', 'presence_penalty']);
    expect(fake.requests[1].body).toMatchObject({ top_k: 40, max_tokens: 55, system: 'You are terse.' });
    await llm.generate({ target: target('google'), messages, params, stream: false });
    expect((fake.requests[2].body as { generationConfig?: unknown }).generationConfig).toMatchObject({
      topK: 40,
      maxOutputTokens: 55,
    });
  });

  it('an upstream error carries its status and never the key', async () => {
    fake.script({ status: 500, errorBody: { error: { message: `bad key ${KEY}` } } });
    const error = await llm
      .generate({ target: target('openai'), messages, params: {}, stream: false })
      .catch((e) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error.kind).toBe('upstream_status');
    expect(error.upstreamStatus).toBe(500);
    expect(error.message).not.toContain(KEY);
  });

  it('an unreadable response is invalid_response', async () => {
    fake.script({ rawBody: '{"choices": "nope"' });
    const error = await llm
      .generate({ target: target('openai'), messages, params: {}, stream: false })
      .catch((e) => e);
    expect(error).toMatchObject({ kind: 'invalid_response' });
  });

  it('a slow upstream times out; a cancelled call aborts the upstream connection', async () => {
    fake.script({ delayMs: 2000 });
    const timeout = await llm
      .generate({ target: target('anthropic'), messages, params: { timeout_ms: 200 }, stream: false })
      .catch((e) => e);
    expect(timeout).toMatchObject({ kind: 'timeout' });

    fake.reset();
    fake.script({ chunks: Array.from({ length: 100 }, () => 'x'), chunkDelayMs: 20 });
    const controller = new AbortController();
    let got = 0;
    const cancelled = await llm
      .generate({
        target: target('openai'),
        messages,
        params: {},
        stream: true,
        signal: controller.signal,
        onEvent: () => {
          if (++got === 3) controller.abort();
        },
      })
      .catch((e) => e);
    expect(cancelled).toMatchObject({ kind: 'aborted' });
    expect((await fake.waitForClientClose()).clientClosed).toBe(true);
  });

  it('lists models for every wire protocol', async () => {
    for (const provider of ['openai', 'anthropic', 'google'] as ProviderKind[]) {
      const models = await llm.listModels(target(provider));
      expect(models.map((m) => m.id)).toEqual(fake.models);
    }
  });
});
