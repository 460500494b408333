import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake model server on loopback that speaks the three wire protocols Hearth's providers use, so the
 * real SDKs (`openai`, `@anthropic-ai/sdk`, `@google/genai`) are exercised end to end:
 * - OpenAI Chat Completions: `POST /v1/chat/completions` (JSON or SSE `data:` chunks ending `[DONE]`,
 *   `reasoning_content` deltas, usage when asked), `GET /v1/models`.
 * - Anthropic Messages: `POST /v1/messages` (JSON or the named SSE events message_start …
 *   message_stop, `thinking_delta` for reasoning), `GET /v1/models`.
 * - Gemini: `POST /{v1,v1beta}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`,
 *   `GET /{v1,v1beta}/models` (told apart from OpenAI's list by the Google key header).
 *
 * By default it answers `ECHO: <last user text>`. Tests queue scripted behaviours with `script()`
 * (reply text or chunks, delays, reasoning, HTTP errors, malformed bodies, a hang) and read what was
 * received in `requests`, including whether the client closed the connection early.
 */

export type WireProtocol = 'openai' | 'anthropic' | 'gemini';

export interface FakeScript {
  /** The whole reply (split into `chunks` of ~8 characters when streaming, unless chunks are given). */
  reply?: string;
  chunks?: string[];
  reasoning?: string;
  /** Wait before the response starts. */
  delayMs?: number;
  /** Wait between streamed chunks. */
  chunkDelayMs?: number;
  /** Answer with this HTTP status and error body instead. */
  status?: number;
  errorBody?: unknown;
  /** Answer 200 with this raw text (not JSON, or JSON of the wrong shape). */
  rawBody?: string;
  /** Never answer (until the client goes away or the server closes). */
  hang?: boolean;
  /** Stream this many chunks, then stop answering (connection stays open). */
  stallAfterChunks?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Only for this protocol (default: the next request of any protocol). */
  protocol?: WireProtocol;
}

export interface RecordedRequest {
  protocol: WireProtocol;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The conversation as plain `{role, content}` whatever the protocol. */
  messages: Array<{ role: string; content: string }>;
  model: string | null;
  stream: boolean;
  /** Set when the client closed the connection before the response ended. */
  clientClosed: boolean;
  completed: boolean;
  receivedAt: number;
}

export interface FakeModelServer {
  url: string;
  /** Base URLs per SDK: OpenAI and Anthropic SDKs take `${url}/v1` and `${url}`; Gemini takes `url`. */
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  geminiBaseUrl: string;
  requests: RecordedRequest[];
  script(...scripts: FakeScript[]): void;
  models: string[];
  reset(): void;
  /** Resolves when a request whose connection the client closed has been seen (for abort tests). */
  waitForClientClose(timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/**
 * A scripted delay. Unref'd: a delay still pending when its test ends (the client gave up) must not
 * keep the Jest worker alive.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

function splitChunks(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => {
        if (typeof part === 'string') return part;
        const p = part as Record<string, unknown>;
        return typeof p.text === 'string' ? p.text : '';
      })
      .join('');
  return '';
}

function normalise(
  protocol: WireProtocol,
  body: Record<string, unknown>,
): Array<{ role: string; content: string }> {
  if (protocol === 'openai') {
    return ((body.messages as Array<Record<string, unknown>>) ?? []).map((m) => ({
      role: String(m.role),
      content: textOf(m.content),
    }));
  }
  if (protocol === 'anthropic') {
    const system = body.system === undefined ? [] : [{ role: 'system', content: textOf(body.system) }];
    return [
      ...system,
      ...((body.messages as Array<Record<string, unknown>>) ?? []).map((m) => ({
        role: String(m.role),
        content: textOf(m.content),
      })),
    ];
  }
  const sys = body.systemInstruction as { parts?: Array<{ text?: string }> } | undefined;
  const system = sys?.parts ? [{ role: 'system', content: sys.parts.map((p) => p.text ?? '').join('') }] : [];
  return [
    ...system,
    ...((body.contents as Array<{ role?: string; parts?: Array<{ text?: string }> }>) ?? []).map((c) => ({
      role: c.role === 'model' ? 'assistant' : (c.role ?? 'user'),
      content: (c.parts ?? []).map((p) => p.text ?? '').join(''),
    })),
  ];
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const queue: FakeScript[] = [];
  const requests: RecordedRequest[] = [];
  const closeWaiters: Array<(r: RecordedRequest) => void> = [];
  const sockets = new Set<import('node:net').Socket>();
  const models = ['fake-model', 'fake-model-large'];

  const nextScript = (protocol: WireProtocol): FakeScript => {
    const index = queue.findIndex((s) => !s.protocol || s.protocol === protocol);
    return index >= 0 ? queue.splice(index, 1)[0] : {};
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const googleClient = req.headers['x-goog-api-key'] !== undefined || url.searchParams.has('key');
    if (req.method === 'GET' && /^\/(v1beta|v1|v1alpha)\/models$/.test(path) && googleClient) {
      json(res, 200, {
        models: models.map((id) => ({
          name: `models/${id}`,
          displayName: id,
          supportedGenerationMethods: ['generateContent'],
        })),
      });
      return;
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      const anthropic = req.headers['anthropic-version'] !== undefined;
      const data = models.map((id) =>
        anthropic
          ? { type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' }
          : { id, object: 'model', created: 1767225600, owned_by: 'fake' },
      );
      json(
        res,
        200,
        anthropic
          ? { data, has_more: false, first_id: models[0], last_id: models.at(-1) }
          : { object: 'list', data },
      );
      return;
    }
    let protocol: WireProtocol | null = null;
    let model: string | null = null;
    let stream = false;
    const gemini = /^\/(?:v1beta|v1|v1alpha)\/models\/([^:]+):(generateContent|streamGenerateContent)$/.exec(
      path,
    );
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions'))
      protocol = 'openai';
    else if (req.method === 'POST' && (path === '/v1/messages' || path === '/messages'))
      protocol = 'anthropic';
    else if (req.method === 'POST' && gemini) {
      protocol = 'gemini';
      model = decodeURIComponent(gemini[1]);
      stream = gemini[2] === 'streamGenerateContent';
    }
    if (!protocol) {
      json(res, 404, { error: { message: `No route ${req.method} ${path}` } });
      return;
    }
    const body = (await readBody(req)) as Record<string, unknown>;
    if (protocol !== 'gemini') {
      model = typeof body.model === 'string' ? body.model : null;
      stream = body.stream === true;
    }
    const record: RecordedRequest = {
      protocol,
      method: req.method ?? 'POST',
      path: `${path}${url.search}`,
      headers: req.headers,
      body,
      messages: typeof body === 'object' && body !== null ? normalise(protocol, body) : [],
      model,
      stream,
      clientClosed: false,
      completed: false,
      receivedAt: Date.now(),
    };
    requests.push(record);
    res.on('close', () => {
      if (!record.completed) {
        record.clientClosed = true;
        for (const w of closeWaiters.splice(0)) w(record);
      }
    });

    const script = nextScript(protocol);
    if (script.delayMs) await sleep(script.delayMs);
    if (script.hang) return;
    if (script.status && script.status >= 400) {
      record.completed = true;
      json(
        res,
        script.status,
        script.errorBody ?? {
          error: { message: `fake upstream error ${script.status}`, type: 'fake_error' },
        },
      );
      return;
    }
    if (script.rawBody !== undefined) {
      record.completed = true;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(script.rawBody);
      return;
    }
    const lastUser = [...record.messages].reverse().find((m) => m.role === 'user');
    const reply =
      script.reply ?? (script.chunks ? script.chunks.join('') : `ECHO: ${lastUser?.content ?? ''}`);
    const chunks = script.chunks ?? splitChunks(reply);
    const usage = script.usage ?? { prompt_tokens: 10, completion_tokens: Math.max(1, chunks.length) };
    const ctx = { res, record, script, reply, chunks, usage, model: model ?? 'fake-model' };
    if (protocol === 'openai') await (stream ? openaiStream(ctx) : openaiJson(ctx));
    else if (protocol === 'anthropic') await (stream ? anthropicStream(ctx) : anthropicJson(ctx));
    else await (stream ? geminiStream(ctx) : geminiJson(ctx));
  }

  interface Ctx {
    res: ServerResponse;
    record: RecordedRequest;
    script: FakeScript;
    reply: string;
    chunks: string[];
    usage: { prompt_tokens: number; completion_tokens: number };
    model: string;
  }

  function json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function done(ctx: Ctx, body?: unknown): void {
    ctx.record.completed = true;
    if (body === undefined) ctx.res.end();
    else json(ctx.res, 200, body);
  }

  async function streamChunks(ctx: Ctx, write: (chunk: string, index: number) => void): Promise<boolean> {
    for (let i = 0; i < ctx.chunks.length; i++) {
      if (ctx.record.clientClosed) return false;
      if (ctx.script.stallAfterChunks !== undefined && i >= ctx.script.stallAfterChunks) {
        await new Promise<void>((resolve) => ctx.res.on('close', () => resolve()));
        return false;
      }
      write(ctx.chunks[i], i);
      if (ctx.script.chunkDelayMs) await sleep(ctx.script.chunkDelayMs);
    }
    return !ctx.record.clientClosed;
  }

  const sse = (res: ServerResponse) =>
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });

  async function openaiJson(ctx: Ctx): Promise<void> {
    done(ctx, {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: ctx.reply,
            ...(ctx.script.reasoning ? { reasoning_content: ctx.script.reasoning } : {}),
          },
          finish_reason: 'stop',
        },
      ],
      usage: { ...ctx.usage, total_tokens: ctx.usage.prompt_tokens + ctx.usage.completion_tokens },
    });
  }

  async function openaiStream(ctx: Ctx): Promise<void> {
    const { res } = ctx;
    sse(res);
    const base = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: ctx.model,
    };
    const send = (
      delta: Record<string, unknown>,
      finish: string | null = null,
      extra: Record<string, unknown> = {},
    ) =>
      res.write(
        `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
      );
    send({ role: 'assistant', content: '' });
    if (ctx.script.reasoning)
      for (const part of splitChunks(ctx.script.reasoning)) send({ reasoning_content: part });
    if (!(await streamChunks(ctx, (chunk) => send({ content: chunk })))) return;
    send({}, 'stop');
    const body = ctx.record.body as Record<string, unknown>;
    if ((body.stream_options as Record<string, unknown> | undefined)?.include_usage) {
      res.write(
        `data: ${JSON.stringify({ ...base, choices: [], usage: { ...ctx.usage, total_tokens: ctx.usage.prompt_tokens + ctx.usage.completion_tokens } })}\n\n`,
      );
    }
    res.write('data: [DONE]\n\n');
    done(ctx);
  }

  async function anthropicJson(ctx: Ctx): Promise<void> {
    done(ctx, {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [
        ...(ctx.script.reasoning
          ? [{ type: 'thinking', thinking: ctx.script.reasoning, signature: 'fake' }]
          : []),
        { type: 'text', text: ctx.reply },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: ctx.usage.prompt_tokens, output_tokens: ctx.usage.completion_tokens },
    });
  }

  async function anthropicStream(ctx: Ctx): Promise<void> {
    const { res } = ctx;
    sse(res);
    const event = (name: string, data: Record<string, unknown>) =>
      res.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
    event('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: ctx.usage.prompt_tokens, output_tokens: 1 },
      },
    });
    let index = 0;
    if (ctx.script.reasoning) {
      event('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      for (const part of splitChunks(ctx.script.reasoning))
        event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: part } });
      event('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'fake' } });
      event('content_block_stop', { index });
      index++;
    }
    event('content_block_start', { index, content_block: { type: 'text', text: '' } });
    const textIndex = index;
    if (
      !(await streamChunks(ctx, (chunk) =>
        event('content_block_delta', { index: textIndex, delta: { type: 'text_delta', text: chunk } }),
      ))
    )
      return;
    event('content_block_stop', { index: textIndex });
    event('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: ctx.usage.completion_tokens },
    });
    event('message_stop', {});
    done(ctx);
  }

  const geminiUsage = (ctx: Ctx) => ({
    promptTokenCount: ctx.usage.prompt_tokens,
    candidatesTokenCount: ctx.usage.completion_tokens,
    totalTokenCount: ctx.usage.prompt_tokens + ctx.usage.completion_tokens,
  });

  async function geminiJson(ctx: Ctx): Promise<void> {
    const parts = [
      ...(ctx.script.reasoning ? [{ text: ctx.script.reasoning, thought: true }] : []),
      { text: ctx.reply },
    ];
    done(ctx, {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: geminiUsage(ctx),
      modelVersion: ctx.model,
    });
  }

  async function geminiStream(ctx: Ctx): Promise<void> {
    const { res } = ctx;
    sse(res);
    const send = (parts: Array<Record<string, unknown>>, finish?: string) =>
      res.write(
        `data: ${JSON.stringify({
          candidates: [
            { content: { role: 'model', parts }, index: 0, ...(finish ? { finishReason: finish } : {}) },
          ],
          ...(finish ? { usageMetadata: geminiUsage(ctx) } : {}),
          modelVersion: ctx.model,
        })}\r\n\r\n`,
      );
    if (ctx.script.reasoning) send([{ text: ctx.script.reasoning, thought: true }]);
    if (!(await streamChunks(ctx, (chunk) => send([{ text: chunk }])))) return;
    send([{ text: '' }], 'STOP');
    done(ctx);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    geminiBaseUrl: url,
    requests,
    models,
    script: (...scripts) => queue.push(...scripts),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    waitForClientClose: (timeoutMs = 5000) =>
      new Promise<RecordedRequest>((resolve, reject) => {
        const already = requests.find((r) => r.clientClosed);
        if (already) return resolve(already);
        const timer = setTimeout(() => reject(new Error('no client close seen')), timeoutMs);
        closeWaiters.push((r) => {
          clearTimeout(timer);
          resolve(r);
        });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
