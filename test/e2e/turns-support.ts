import http from 'node:http';
import { generationRunsRepository, type GenerationRunRow } from '@hearth/persistence';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { ADMIN_KEY, startTestApp, type TestApp, type TestAppOptions } from '../support/test-app';
import type { TestDatabase } from '../support/test-database';

/** Shared helpers of the turn suites (test/e2e/turns-*.test.ts). */

export const FAKE_KEY = 'sk-fake-turns-0123456789abcdef';

export type Provider = 'openai' | 'anthropic' | 'google' | 'deepseek' | 'xai' | 'openai-compatible';

export function baseUrlFor(fake: FakeModelServer, provider: Provider): string {
  if (provider === 'anthropic') return fake.anthropicBaseUrl;
  if (provider === 'google') return fake.geminiBaseUrl;
  return fake.openaiBaseUrl;
}

/** The API with the `env` model source pointed at the fake model server. */
export async function startTurnsApp(
  fake: FakeModelServer,
  options: { provider?: Provider; env?: Record<string, string>; database?: TestDatabase } & Pick<
    TestAppOptions,
    'embedded'
  > = {},
): Promise<TestApp> {
  const provider = options.provider ?? 'openai';
  return startTestApp({
    database: options.database,
    embedded: options.embedded,
    env: {
      LLM_PROVIDER: provider,
      LLM_MODEL: 'fake-model',
      LLM_BASE_URL: baseUrlFor(fake, provider),
      LLM_API_KEY: FAKE_KEY,
      ALLOW_PRIVATE_BASE_URL: 'true',
      ...options.env,
    },
  });
}

export { startFakeModelServer, type FakeModelServer };

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** A POST (or GET) server-sent event reader that the test can drop at any time. */
export class SseCall {
  readonly messages: SseMessage[] = [];
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  body = '';
  ended = false;
  private buffer = '';
  private waiters: Array<() => void> = [];
  private request: http.ClientRequest | null = null;

  static open(
    t: Pick<TestApp, 'baseUrl'>,
    method: 'POST' | 'GET',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<SseCall> {
    const call = new SseCall();
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        `${t.baseUrl}${path}`,
        {
          method,
          headers: {
            accept: 'text/event-stream',
            'x-api-key': ADMIN_KEY,
            ...(payload ? { 'content-type': 'application/json' } : {}),
            ...headers,
          },
        },
        (res) => {
          call.status = res.statusCode ?? 0;
          call.headers = res.headers;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => call.onChunk(chunk));
          res.on('end', () => call.finish());
          res.on('close', () => call.finish());
          res.on('error', () => call.finish());
          resolve(call);
        },
      );
      req.on('error', (error) => {
        call.finish();
        reject(error);
      });
      call.request = req;
      req.end(payload);
    });
  }

  /** Parsed `data` of the events of one type. */
  dataOf<T = Record<string, unknown>>(type: string): T[] {
    return this.messages.filter((m) => m.event === type).map((m) => JSON.parse(m.data) as T);
  }

  get types(): string[] {
    return this.messages.map((m) => m.event);
  }

  async waitFor(predicate: (c: SseCall) => boolean, timeoutMs = 10_000, what = 'a condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.types)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForEnd(timeoutMs = 15_000): Promise<void> {
    return this.waitFor((c) => c.ended, timeoutMs, 'the stream to end');
  }

  /** Drops the connection (a client going away). */
  drop(): void {
    this.request?.destroy();
  }

  private onChunk(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      return;
    }
    this.buffer += chunk;
    let index: number;
    while ((index = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, index);
      this.buffer = this.buffer.slice(index + 2);
      let id: string | null = null;
      let event = 'message';
      const data: string[] = [];
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) {
          data.push(line.slice(6));
          hasData = true;
        }
      }
      if (hasData) this.messages.push({ id, event, data: data.join('\n') });
    }
    this.wake();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

export function runRow(t: TestApp, runId: string): Promise<GenerationRunRow | undefined> {
  return generationRunsRepository.find(t.resources.database.db, runId);
}

export async function floorsOf(t: TestApp, sessionId: string, apiKey = ADMIN_KEY) {
  const res = await t.http.get(`/sessions/${sessionId}/floors`).set('x-api-key', apiKey);
  if (res.status !== 200) throw new Error(`GET floors answered ${res.status}: ${res.text}`);
  return res.body.data as Array<{
    id: string;
    floor_no: number;
    state: string;
    token_in: number;
    token_out: number;
    reasoning_text: string | null;
    pages: Array<{
      id: string;
      page_kind: string;
      is_active: boolean;
      version: number;
      messages: Array<{ id: string; role: string; content: string }>;
    }>;
  }>;
}

export async function until(
  predicate: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  what = 'a condition',
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
