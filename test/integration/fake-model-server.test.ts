import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';

/** The fake model server speaks each wire protocol well enough for the real SDKs, streaming included. */
describe('fake model server through the real SDKs', () => {
  let fake: FakeModelServer;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let gemini: GoogleGenAI;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    openai = new OpenAI({ apiKey: 'sk-test', baseURL: fake.openaiBaseUrl, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.anthropicBaseUrl, maxRetries: 0 });
    // The Gemini SDK reaches for Node's global undici dispatcher, which jest's sandbox does not share;
    // Hearth gives every SDK its own fetch anyway (issue 6's network guard), so the test does the same.
    const plainFetch = ((url: string, init: RequestInit & { dispatcher?: unknown }) => {
      const { dispatcher: _ignored, ...rest } = init;
      return fetch(url, rest);
    }) as unknown as typeof fetch;
    gemini = new GoogleGenAI({
      apiKey: 'g-test',
      httpOptions: { baseUrl: fake.geminiBaseUrl, fetch: plainFetch },
    });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('OpenAI: JSON and streamed replies, reasoning and usage', async () => {
    const res = await openai.chat.completions.create({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
    });
    expect(res.choices[0].message.content).toBe('ECHO: Hello there');
    expect(fake.requests[0].messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello there' },
    ]);
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-test');

    fake.script({ chunks: ['Once ', 'upon ', 'a time'], reasoning: 'thinking hard' });
    const stream = await openai.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'Tell' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const parts: string[] = [];
    let reasoning = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      if (delta?.content) parts.push(delta.content);
      if (delta?.reasoning_content) reasoning += delta.reasoning_content;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(parts).toEqual(['Once ', 'upon ', 'a time']);
    expect(reasoning).toBe('thinking hard');
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3 });
    expect(fake.requests[1].stream).toBe(true);
  });

  it('Anthropic: JSON and streamed replies with thinking', async () => {
    const res = await anthropic.messages.create({
      model: 'fake-model',
      max_tokens: 100,
      system: 'Sys',
      messages: [{ role: 'user', content: 'Hi Claude' }],
    });
    expect(res.content.find((b) => b.type === 'text')).toMatchObject({ text: 'ECHO: Hi Claude' });
    expect(fake.requests[0].messages[0]).toEqual({ role: 'system', content: 'Sys' });
    const auth = fake.requests[0].headers['x-api-key'] ?? fake.requests[0].headers.authorization;
    expect(String(auth)).toContain('sk-ant-test');

    fake.script({ reply: 'Streamed answer', reasoning: 'pondering' });
    const stream = anthropic.messages.stream({
      model: 'fake-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'x' }],
    });
    let text = '';
    let thinking = '';
    stream.on('text', (t) => (text += t));
    stream.on('thinking', (t) => (thinking += t));
    const final = await stream.finalMessage();
    expect(text).toBe('Streamed answer');
    expect(thinking).toBe('pondering');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it('Gemini: generateContent and streamGenerateContent', async () => {
    const res = await gemini.models.generateContent({
      model: 'fake-model',
      contents: [{ role: 'user', parts: [{ text: 'Hi Gemini' }] }],
      config: { systemInstruction: 'Sys' },
    });
    expect(res.text).toBe('ECHO: Hi Gemini');
    expect(fake.requests[0].messages).toEqual([
      { role: 'system', content: 'Sys' },
      { role: 'user', content: 'Hi Gemini' },
    ]);
    fake.script({ chunks: ['a', 'b', 'c'] });
    const stream = await gemini.models.generateContentStream({
      model: 'fake-model',
      contents: 'stream please',
    });
    let text = '';
    for await (const chunk of stream) text += chunk.text ?? '';
    expect(text).toBe('abc');
    expect(fake.requests[1].stream).toBe(true);
  });

  it('upstream errors reach the SDK with their status; model lists answer', async () => {
    fake.script({ status: 429, protocol: 'openai' });
    await expect(
      openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 429 });
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id)).toEqual(fake.models);
    const anthropicModels = await anthropic.models.list();
    expect(anthropicModels.data.map((m) => m.id)).toEqual(fake.models);
  });

  it('sees the client close the connection when a stream is aborted', async () => {
    fake.script({ chunks: Array.from({ length: 50 }, () => 'tick '), chunkDelayMs: 20 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      { signal: controller.signal },
    );
    let seen = 0;
    try {
      for await (const _chunk of stream) {
        if (++seen === 3) controller.abort();
      }
    } catch {
      // Depending on the SDK version an aborted stream ends or throws; either way it stops early.
    }
    expect(seen).toBeLessThan(50);
    const closed = await fake.waitForClientClose();
    expect(closed.clientClosed).toBe(true);
    expect(closed.completed).toBe(false);
  });
});
