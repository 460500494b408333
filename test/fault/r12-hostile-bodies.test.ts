import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { openDatabase, type DatabaseHandle } from '@hearth/persistence';
import { ensureBuiltApi, startBuiltApi, type BuiltApi } from '../support/built-api';
import { extJsonlChat } from '../support/factories/chat-transfer';
import { REDIS_URL } from '../support/postgres-admin';
import { ADMIN_KEY } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
/** The defaults the API runs with here (HTTP_BODY_LIMIT_BYTES, CHAT_IMPORT_MAX_BYTES). */
const BODY_LIMIT = 10 * MiB;
const CHAT_IMPORT_MAX_BYTES = 5_000_000;
/** The deepest JSON taken (JSON_MAX_DEPTH in libs/domain/src/text/json-depth.ts). */
const MAX_DEPTH = 256;

const deepArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const deepObjects = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 request over a raw socket: the test decides every header byte (a lying or huge
 * Content-Length) and when each body byte is sent. `answer` resolves with the first response (status 0
 * when the server closed without answering); `sent` counts the body bytes written so far.
 */
class RawRequest {
  readonly answer: Promise<Answer>;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
  sent = 0;
  answered = false;
  private readonly socket: net.Socket;

  constructor(api: BuiltApi, method: string, path: string, headers: Record<string, string>) {
    const url = new URL(api.url);
    this.socket = net.connect(Number(url.port), url.hostname);
    this.socket.on('error', () => undefined); // EPIPE/ECONNRESET once the server has answered and closed
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    let received = Buffer.alloc(0);
    this.answer = new Promise<Answer>((resolve) => {
      const finish = (answer: Answer) => {
        if (this.answered) return;
        this.answered = true;
        resolve(answer);
      };
      const tryParse = (closed: boolean) => {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return closed ? finish({ status: 0, headers: {}, body: '' }) : undefined;
        const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
        const head: Record<string, string> = {};
        for (const line of lines) {
          const colon = line.indexOf(':');
          head[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const body = received.subarray(end + 4);
        const length = head['content-length'] === undefined ? null : Number(head['content-length']);
        if (length !== null ? body.length >= length : closed) {
          finish({
            status: Number(statusLine.split(' ')[1]),
            headers: head,
            body: body.subarray(0, length ?? body.length).toString('utf8'),
          });
        }
      };
      this.socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        tryParse(false);
      });
      this.socket.on('close', () => tryParse(true));
    });
    const head = Object.entries({ host: url.host, 'x-api-key': ADMIN_KEY, ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    this.socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`);
  }

  /** Writes body bytes, waiting while the socket buffer is full; false once the socket is gone. */
  async write(bytes: Buffer | string): Promise<boolean> {
    if (this.socket.destroyed || !this.socket.writable) return false;
    const length = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
    const flushed = this.socket.write(bytes);
    this.sent += length;
    if (!flushed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.socket.off('drain', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.once('drain', done);
        this.socket.once('close', done);
      });
    }
    return !this.socket.destroyed;
  }

  /**
   * Streams `total` bytes of a JSON string body (`{"<field>":"xxxx...`, never complete JSON; with
   * `field: null` only the x's) from one reused 64 KiB chunk, `delayMs` apart, until it is all sent, the
   * server answers (unless `afterAnswer`) or the socket closes.
   */
  async stream(
    total: number,
    options: { field?: string | null; delayMs?: number; chunked?: boolean; afterAnswer?: boolean } = {},
  ) {
    const prefix = options.field === null ? '' : `{"${options.field ?? 'title'}":"`;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const frame = (bytes: Buffer) =>
      options.chunked
        ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')])
        : bytes;
    if (prefix !== '' && !(await this.write(frame(Buffer.from(prefix))))) return;
    let left = total - prefix.length;
    while (left > 0 && (options.afterAnswer || !this.answered)) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      if (!(await this.write(frame(piece)))) return;
      left -= piece.length;
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    }
    if (options.chunked && !this.answered) await this.write('0\r\n\r\n');
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A JSON body sent whole (fetch), answered as {status, body}. */
async function send(api: BuiltApi, method: string, path: string, body: string) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as { data?: any; error?: any } };
}

/** The API still serves: an authenticated read answers 200. */
async function serves(api: BuiltApi, sessionId: string): Promise<number> {
  const res = await fetch(`${api.url}/sessions/${sessionId}`, { headers: { 'x-api-key': ADMIN_KEY } });
  await res.arrayBuffer();
  return res.status;
}

/** The resident set of a process (VmRSS), bytes. */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

/** Samples a process's RSS every 10 ms until stopped; the highest reading. */
function rssPeak(pid: number) {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}

/** The request-body bytes the API holds right now (the `hearth_http_body_buffer_bytes` gauge). */
async function bufferedBytes(api: BuiltApi): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  const match = /^hearth_http_body_buffer_bytes (\d+)/m.exec(text);
  if (!match) throw new Error('no hearth_http_body_buffer_bytes gauge in /metrics');
  return Number(match[1]);
}

/**
 * The gauge once the closed uploads have been let go of: a reservation is released when its request
 * closes, which the server sees a moment after the client does, so this polls (up to 10 s) for 0 and
 * returns the last reading.
 */
async function bufferedBytesSettled(api: BuiltApi): Promise<number> {
  let bytes = await bufferedBytes(api);
  for (let i = 0; i < 200 && bytes !== 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    bytes = await bufferedBytes(api);
  }
  return bytes;
}

/** Polls `condition` every 20 ms until it holds (fails after 10 s). */
async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not met within 10 s');
}

/** A `{"data": <ext_jsonl chat>}` body of exactly `bytes` bytes (one long ASCII message). */
function chatImportBody(bytes: number): string {
  const body = (pad: string) =>
    JSON.stringify({
      data: `${extJsonlChat(1)}\n${JSON.stringify({ name: 'User', is_user: true, mes: `m${pad}` })}`,
    });
  const text = body('x'.repeat(bytes - Buffer.byteLength(body(''))));
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

/**
 * R12 (performance-and-reliability.md part D): oversized and hostile bodies against the built API in a
 * child process (its RSS is read from /proc). Every answer is a 4xx with the spec's code, never a 500;
 * no body is buffered whole; the process keeps serving. Limits with their own at-limit tests elsewhere
 * (derived value 256 KiB, character import 200 KiB, dynamic_context, 33 request injections, batches of
 * 101 ids) are not repeated here.
 */
describe('R12: oversized and hostile request bodies', () => {
  let database: TestDatabase;
  /** A built API on this suite's database, with its own queue prefix and the given settings. */
  const startR12Api = (prefix: string, env: Record<string, string>) =>
    startBuiltApi({
      env: {
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        REDIS_URL,
        QUEUE_PREFIX: `${prefix}-${randomBytes(4).toString('hex')}`,
        BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
        ...env,
      },
    });
  let audit: DatabaseHandle;
  let api: BuiltApi;
  let sessionId: string;
  let projectId: string;
  let worldbookId: string;

  beforeAll(async () => {
    ensureBuiltApi();
    database = await createTestDatabase();
    audit = await openDatabase({ url: database.url, poolSize: 2, applicationName: 'r12-audit' });
    api = await startR12Api('hearth-r12', {
      HTTP_BODY_LIMIT_BYTES: String(BODY_LIMIT),
      CHAT_IMPORT_MAX_BYTES: String(CHAT_IMPORT_MAX_BYTES),
    });
    const session = await send(api, 'POST', '/sessions', '{}');
    sessionId = session.body.data.id;
    ({ project_id: projectId } = await audit.db
      .selectFrom('sessions')
      .select(['project_id'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow());
    const book = await send(
      api,
      'POST',
      '/import/worldbook',
      JSON.stringify({ name: 'Deep', data: { entries: { 0: { uid: 0, key: ['k'], content: 'c' } } } }),
    );
    worldbookId = book.body.data.id;
  });

  afterEach(() => {
    // No request of any test ended in a 500 (the filter logs each with its stack).
    expect(api.lines.filter((l) => l.includes('"msg":"unhandled error"'))).toEqual([]);
  });

  afterAll(async () => {
    await api?.stop();
    await audit?.close();
    await database?.drop();
  });

  const worldbookVersion = async (): Promise<number> => {
    const res = await fetch(`${api.url}/worldbooks/${worldbookId}`, { headers: { 'x-api-key': ADMIN_KEY } });
    return ((await res.json()) as { data: { version: number } }).data.version;
  };

  describe('JSON nested 100,000 levels deep', () => {
    const routes: Array<[string, string, () => string, (deep: string) => string]> = [
      [
        'derived output create',
        'POST',
        () => `/projects/${projectId}/derived-outputs`,
        (v) => `{"domain":"summary","value":${v}}`,
      ],
      [
        'variable upsert',
        'PUT',
        () => '/variables',
        (v) => `{"scope":"global","scope_id":"global","key":"k","value":${v}}`,
      ],
      [
        'dry-run',
        'POST',
        () => `/sessions/${sessionId}/respond/dry-run`,
        (v) => `{"message":"hi","prompt_runtime_injections":${v}}`,
      ],
      [
        'worldbook PUT',
        'PUT',
        () => `/worldbooks/${worldbookId}`,
        (v) => `{"name":"n","expected_version":1,"data":${v}}`,
      ],
      ['session create', 'POST', () => '/sessions', (v) => `{"title":${v}}`],
    ];

    it.each(
      routes.flatMap(([label, method, path, body]) => [
        [label, 'arrays', method, path, body(deepArrays(100_000))] as const,
        [label, 'objects', method, path, body(deepObjects(100_000))] as const,
      ]),
    )(
      '%s, %s: 400 validation_error, and the API keeps serving',
      async (_label, _kind, method, path, body) => {
        const res = await send(api, method, path(), body);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'validation_error', details: { max_depth: MAX_DEPTH } });
        expect(await serves(api, sessionId)).toBe(200);
      },
    );

    it(`takes a body of exactly ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1}`, async () => {
      // Body (1) > data (2) > entries (3) > entry (4) > extensions (5..): the entry's extensions are kept as sent.
      const put = (extensionLevels: number, version: number) =>
        send(
          api,
          'PUT',
          `/worldbooks/${worldbookId}`,
          `{"name":"Deep","expected_version":${version},"data":{"entries":{"0":{"uid":0,"key":["k"],"content":"c",` +
            `"extensions":${deepObjects(extensionLevels)}}}}}`,
        );
      const version = await worldbookVersion();
      const over = await put(MAX_DEPTH - 3, version);
      expect([over.status, over.body.error?.code]).toEqual([400, 'validation_error']);
      expect(await worldbookVersion()).toBe(version);
      const at = await put(MAX_DEPTH - 4, version);
      expect(at.status).toBe(200);
      expect(at.body.data.version).toBe(version + 1);
    });

    it('a route with a lower bound of its own keeps its code below the global one', async () => {
      const res = await send(
        api,
        'POST',
        `/projects/${projectId}/derived-outputs`,
        `{"domain":"summary","value":${deepArrays(200)}}`,
      );
      expect([res.status, res.body.error.code]).toEqual([400, 'derived_output_payload_invalid']);
    });

    it('JSON nested inside an import (a chat line, a card file): 400 import_parse_error, nothing written', async () => {
      const sessionsBefore = await audit.db
        .selectFrom('sessions')
        .select(({ fn }) => fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      const line = `{"name":"User","is_user":true,"mes":"x","extra":${deepArrays(100_000)}}`;
      const chat = await send(
        api,
        'POST',
        '/import/chat',
        JSON.stringify({ data: `${extJsonlChat(1)}\n${line}` }),
      );
      expect(chat.status).toBe(400);
      expect(chat.body.error).toMatchObject({
        code: 'import_parse_error',
        details: { max_depth: MAX_DEPTH },
      });

      const card = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"N","extensions":${deepArrays(50_000)}}}`;
      const form = new FormData();
      form.append('create_session', 'false');
      form.append('file', new Blob([card], { type: 'application/json' }), 'card.json');
      const upload = await fetch(`${api.url}/import/character`, {
        method: 'POST',
        headers: { 'x-api-key': ADMIN_KEY },
        body: form,
      });
      expect(upload.status).toBe(400);
      expect(((await upload.json()) as { error: { code: string } }).error.code).toBe('import_parse_error');

      const sessionsAfter = await audit.db
        .selectFrom('sessions')
        .select(({ fn }) => fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      expect(sessionsAfter.n).toBe(sessionsBefore.n);
      expect(await audit.db.selectFrom('characters').selectAll().execute()).toEqual([]);
      expect(await serves(api, sessionId)).toBe(200);
    });
  });

  describe(`chat import of CHAT_IMPORT_MAX_BYTES + 1 sent chunked, no Content-Length`, () => {
    /** An ext_jsonl file of exactly `bytes` UTF-8 bytes. */
    const fileOf = (bytes: number) => {
      const base = extJsonlChat(1) + '\n';
      const line = (pad: string) => JSON.stringify({ name: 'User', is_user: true, mes: `é${pad}` });
      const text = base + line('x'.repeat(bytes - Buffer.byteLength(base + line(''), 'utf8')));
      expect(Buffer.byteLength(text, 'utf8')).toBe(bytes);
      return text;
    };

    it.each(['/import/chat', '/import/chat/jobs'])(
      '%s: 413 import_payload_too_large, nothing written',
      async (path) => {
        const count = async () =>
          Promise.all(
            ['sessions', 'chat_transfer_sessions', 'chat_transfer_jobs'].map(async (table) =>
              Number(
                (
                  await audit.db
                    .selectFrom(table as 'sessions')
                    .select(({ fn }) => fn.countAll<string>().as('n'))
                    .executeTakeFirstOrThrow()
                ).n,
              ),
            ),
          );
        const before = await count();
        const body = JSON.stringify({ data: fileOf(CHAT_IMPORT_MAX_BYTES + 1) });
        const answer = await new Promise<{ status: number; body: string; chunked: boolean }>(
          (resolve, reject) => {
            const req = http.request(
              `${api.url}${path}`,
              {
                method: 'POST',
                headers: {
                  'x-api-key': ADMIN_KEY,
                  'content-type': 'application/json',
                  'transfer-encoding': 'chunked',
                },
              },
              (res) => {
                let text = '';
                res.setEncoding('utf8');
                res.on('data', (c: string) => (text += c));
                res.on('end', () =>
                  resolve({
                    status: res.statusCode ?? 0,
                    body: text,
                    chunked: !req.hasHeader('content-length'),
                  }),
                );
              },
            );
            req.on('error', reject);
            for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.slice(i, i + 256 * 1024));
            req.end();
          },
        );
        expect(answer.chunked).toBe(true);
        expect(answer.status).toBe(413);
        expect(JSON.parse(answer.body).error).toMatchObject({
          code: 'import_payload_too_large',
          details: { byte_count: CHAT_IMPORT_MAX_BYTES + 1, max_bytes: CHAT_IMPORT_MAX_BYTES },
        });
        expect(await count()).toEqual(before);
      },
    );
  });

  describe('bodies far over the JSON limit', () => {
    it('a lying small Content-Length: the declared 64 bytes are the body (400), the 50 MB after them are not read', async () => {
      const req = new RawRequest(api, 'POST', '/sessions', {
        'content-type': 'application/json',
        'content-length': '64',
      });
      // The 64 declared bytes: an unfinished JSON string. The API answers them alone.
      await req.stream(64, { field: 'title' });
      const answer = await req.answer;
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe('validation_error');
      // 50 MB more that the header did not announce: not a request line, so the server closes the
      // connection (Node's 400, if the reset leaves the client time to read it) instead of reading on.
      const total = 50 * 1000 * 1000;
      await req.stream(total, { field: null, afterAnswer: true });
      await req.closed;
      expect(req.sent).toBeLessThan(total);
      expect(await serves(api, sessionId)).toBe(200);
    });

    it('Content-Length and Transfer-Encoding together (request smuggling): 400', async () => {
      const req = new RawRequest(api, 'POST', '/sessions', {
        'content-type': 'application/json',
        'content-length': '2',
        'transfer-encoding': 'chunked',
      });
      // Refused on the headers alone (no body sent, so no unread bytes make the close a reset).
      const answer = await req.answer;
      req.close();
      expect(answer.status).toBe(400);
      expect(await serves(api, sessionId)).toBe(200);
    });

    it('50 MB declared and streamed slowly: 413 payload_too_large before the body is read; others are served meanwhile', async () => {
      const declared = 50 * 1000 * 1000;
      const req = new RawRequest(api, 'POST', '/sessions', {
        'content-type': 'application/json',
        'content-length': String(declared),
      });
      // 1 MiB of the declared 50 MB trickles in (64 KiB every 20 ms), then the client sends nothing more.
      const streaming = req.stream(MiB, { delayMs: 20 });
      // While it trickles in, other requests are answered.
      const reads = [];
      for (let i = 0; i < 5; i++) reads.push(await serves(api, sessionId));
      // The answer comes without the rest of the body (status -1: still waiting after 30 s).
      const answer = await Promise.race([
        req.answer,
        new Promise<Answer>((resolve) =>
          setTimeout(() => resolve({ status: -1, headers: {}, body: '{}' }), 30_000).unref(),
        ),
      ]);
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
      expect(req.sent).toBeLessThanOrEqual(MiB);
      req.close();
      await streaming;
      expect(reads).toEqual([200, 200, 200, 200, 200]);
      expect(await serves(api, sessionId)).toBe(200);
    });

    it('a chunked body over the limit (no Content-Length): 413 payload_too_large', async () => {
      const req = new RawRequest(api, 'POST', '/sessions', {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      });
      await req.stream(BODY_LIMIT + MiB, { chunked: true });
      const answer = await req.answer;
      req.close();
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
    });

    it('20 parallel 50 MB uploads to a JSON route and the chat import: all 413, RSS grows < 50 MB, no 500', async () => {
      const pid = api.child.pid!;
      // Warm: a few ordinary requests, so the baseline includes what every request allocates once.
      for (let i = 0; i < 5; i++) expect(await serves(api, sessionId)).toBe(200);
      const baseline = rssOf(pid);
      const sampler = rssPeak(pid);
      const declared = 50 * 1000 * 1000;
      const uploads = Array.from({ length: 20 }, (_, i) => {
        const req = new RawRequest(api, 'POST', i % 2 === 0 ? '/sessions' : '/import/chat', {
          'content-type': 'application/json',
          'content-length': String(declared),
        });
        const streaming = req.stream(declared, { field: i % 2 === 0 ? 'title' : 'data' });
        return { req, streaming };
      });
      const concurrent = await serves(api, sessionId);
      const answers = await Promise.all(uploads.map(({ req }) => req.answer));
      for (const { req } of uploads) req.close();
      await Promise.all(uploads.map(({ streaming }) => streaming));
      const peak = sampler.stop();

      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(413));
      for (const answer of answers) expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
      expect(concurrent).toBe(200);
      expect(peak - baseline).toBeLessThan(50 * MiB);
      expect(await serves(api, sessionId)).toBe(200);
    });
  });

  describe('chunked uploads against an API on the default budget (a fresh process, so its RSS growth is not hidden by a heap earlier tests grew)', () => {
    let fresh: BuiltApi;
    let freshSessionId: string;

    beforeAll(async () => {
      fresh = await startR12Api('hearth-r12c', { HTTP_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
      freshSessionId = (await send(fresh, 'POST', '/sessions', '{}')).body.data.id;
    });

    afterEach(() => {
      expect(fresh.lines.filter((l) => l.includes('"msg":"unhandled error"'))).toEqual([]);
    });

    afterAll(async () => {
      await fresh?.stop();
    });

    it('20 parallel chunked 50 MB uploads (no Content-Length): each 413 or 503 resource_busy, RSS grows < 50 MB, nothing stays reserved', async () => {
      const pid = fresh.child.pid!;
      for (let i = 0; i < 5; i++) expect(await serves(fresh, freshSessionId)).toBe(200);
      const baseline = rssOf(pid);
      const sampler = rssPeak(pid);
      const total = 50 * 1000 * 1000;
      const uploads = Array.from({ length: 20 }, (_, i) => {
        const req = new RawRequest(fresh, 'POST', i % 2 === 0 ? '/sessions' : '/import/chat', {
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        });
        // Sent until the server answers (it answers without reading the rest, and closes). A 1 ms pause
        // between 64 KiB chunks (still ~1 GB/s offered by the 20) lets a loaded test process notice the
        // answer: without it, it could push a whole body into a server that drains a closing socket.
        const streaming = req.stream(total, {
          field: i % 2 === 0 ? 'title' : 'data',
          chunked: true,
          delayMs: 1,
        });
        return { req, streaming };
      });
      const concurrent = await serves(fresh, freshSessionId);
      const answers = await Promise.all(uploads.map(({ req }) => req.answer));
      for (const { req } of uploads) req.close();
      await Promise.all(uploads.map(({ streaming }) => streaming));
      const peak = sampler.stop();

      for (const answer of answers) {
        expect([413, 503]).toContain(answer.status);
        const { code } = JSON.parse(answer.body).error;
        expect(code).toBe(answer.status === 413 ? 'payload_too_large' : 'resource_busy');
        if (answer.status === 503) expect(answer.headers['retry-after']).toBe('1');
      }
      // None was read whole: each was answered before its client had sent it all.
      for (const { req } of uploads) expect(req.sent).toBeLessThan(total);
      expect(concurrent).toBe(200);
      expect(peak - baseline).toBeLessThan(50 * MiB);
      expect(await bufferedBytesSettled(fresh)).toBe(0);
      expect(await serves(fresh, freshSessionId)).toBe(200);
    });
  });

  describe('the body buffer budget (HTTP_BODY_BUFFER_BUDGET_BYTES = 2 x HTTP_BODY_LIMIT_BYTES)', () => {
    /** A second API on the same database, with a 2 MiB body limit and a 4 MiB budget. */
    const SMALL_LIMIT = 2 * MiB;
    const SMALL_BUDGET = 2 * SMALL_LIMIT;
    let small: BuiltApi;

    beforeAll(async () => {
      small = await startR12Api('hearth-r12b', {
        HTTP_BODY_LIMIT_BYTES: String(SMALL_LIMIT),
        HTTP_BODY_BUFFER_BUDGET_BYTES: String(SMALL_BUDGET),
      });
    });

    afterEach(() => {
      expect(small.lines.filter((l) => l.includes('"msg":"unhandled error"'))).toEqual([]);
    });

    afterAll(async () => {
      await small?.stop();
    });

    /** Opens `count` uploads to the chat import declaring `size` bytes; only their heads are sent. */
    const heads = (count: number, size: number) =>
      Array.from(
        { length: count },
        () =>
          new RawRequest(small, 'POST', '/import/chat', {
            'content-type': 'application/json',
            'content-length': String(size),
          }),
      );

    /** A multipart card upload as bytes, with its content type (boundary). */
    const multipart = async (file: string | Buffer) => {
      const form = new FormData();
      form.append('create_session', 'false');
      form.append('file', new Blob([file], { type: 'application/json' }), 'card.json');
      const encoded = new Response(form);
      return {
        type: encoded.headers.get('content-type')!,
        bytes: Buffer.from(await encoded.arrayBuffer()),
      };
    };

    const card = (name: string) =>
      JSON.stringify({ spec: 'chara_card_v2', spec_version: '2.0', data: { name } });

    it('three parallel declared bodies of 0.9 x the limit: the one that does not fit is 503 resource_busy at once, the others are imported', async () => {
      const size = Math.floor(SMALL_LIMIT * 0.9);
      const body = chatImportBody(size);
      // All three heads first, no body byte yet: two reservations fit (1.8 of 2 x the limit), the third not.
      const uploads = heads(3, size);
      const first = await Promise.race(
        uploads.map((req, index) => req.answer.then((answer) => ({ index, answer }))),
      );
      expect(first.answer.status).toBe(503);
      expect(first.answer.headers['retry-after']).toBe('1');
      expect(JSON.parse(first.answer.body).error.code).toBe('resource_busy');
      // Answered on its head alone.
      expect(uploads[first.index].sent).toBe(0);
      uploads[first.index].close();

      const others = uploads.filter((_, index) => index !== first.index);
      await Promise.all(others.map((req) => req.write(body)));
      const answers = await Promise.all(others.map((req) => req.answer));
      for (const req of others) req.close();
      expect(answers.map((a) => a.status)).toEqual([201, 201]);
      for (const answer of answers) expect(JSON.parse(answer.body).data.session_id).toBeDefined();

      // Released: the refused body, sent again, is imported.
      expect(await bufferedBytesSettled(small)).toBe(0);
      const retry = await send(small, 'POST', '/import/chat', body);
      expect(retry.status).toBe(201);
    });

    it('with the budget nearly taken, a chunked body is 503 mid-stream and a multipart card upload 503 at once; both go through once it is free', async () => {
      const size = Math.floor(SMALL_LIMIT * 0.9);
      const holders = heads(2, size);
      // The holders' reservations are taken once the server has read their heads: a small request
      // sent after them on another connection is answered after that.
      await waitUntil(async () => (await bufferedBytes(small)) === 2 * size);

      const chunked = new RawRequest(small, 'POST', '/import/chat', {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      });
      const total = 50 * 1000 * 1000;
      const streaming = chunked.stream(total, { field: 'data', chunked: true });
      const refused = await chunked.answer;
      chunked.close();
      await streaming;
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.connection).toBe('close');
      expect(JSON.parse(refused.body).error.code).toBe('resource_busy');
      expect(chunked.sent).toBeLessThan(total);

      const charactersBefore = await audit.db.selectFrom('characters').select('id').execute();
      const big = await multipart(Buffer.alloc(600 * 1024, 'x'));
      const upload = new RawRequest(small, 'POST', '/import/character', {
        'content-type': big.type,
        'content-length': String(big.bytes.length),
      });
      const busy = await upload.answer;
      upload.close();
      expect(busy.status).toBe(503);
      expect(busy.headers['retry-after']).toBe('1');
      expect(JSON.parse(busy.body).error.code).toBe('resource_busy');
      expect(upload.sent).toBe(0);

      // The holders give up (aborted uploads): everything is released.
      for (const req of holders) req.close();
      expect(await bufferedBytesSettled(small)).toBe(0);

      const ok = await multipart(card('Budget'));
      const res = await fetch(`${small.url}/import/character`, {
        method: 'POST',
        headers: { 'x-api-key': ADMIN_KEY, 'content-type': ok.type },
        body: ok.bytes,
      });
      expect(res.status).toBe(201);
      await res.arrayBuffer();
      const charactersAfter = await audit.db.selectFrom('characters').select('id').execute();
      expect(charactersAfter.length).toBe(charactersBefore.length + 1);
      const chat = await send(small, 'POST', '/import/chat', chatImportBody(size));
      expect(chat.status).toBe(201);
    });

    it('after many refused and aborted uploads nothing stays reserved: two parallel bodies of exactly the limit (the whole budget) are both imported', async () => {
      // Declared uploads: some hold, the rest are refused; each holder sends half its body and hangs up.
      const declared = heads(8, SMALL_LIMIT);
      await Promise.all(declared.map((req) => req.stream(SMALL_LIMIT / 2, { field: 'data' })));
      // Chunked uploads: each sends up to 1.5 x the limit (413 or 503 as it goes), or hangs up midway.
      const chunked = Array.from({ length: 8 }, (_, i) => {
        const req = new RawRequest(small, 'POST', i % 2 === 0 ? '/sessions' : '/import/chat', {
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        });
        return { req, streaming: req.stream(i < 4 ? SMALL_LIMIT * 1.5 : SMALL_LIMIT / 4, { chunked: true }) };
      });
      await Promise.all(chunked.map(({ streaming }) => streaming));
      // A multipart upload hangs up halfway too.
      const form = await multipart(card('Aborted'));
      const upload = new RawRequest(small, 'POST', '/import/character', {
        'content-type': form.type,
        'content-length': String(form.bytes.length),
      });
      await upload.write(form.bytes.subarray(0, form.bytes.length >> 1));
      for (const req of [...declared, ...chunked.map(({ req }) => req), upload]) req.close();

      expect(await bufferedBytesSettled(small)).toBe(0);
      const body = chatImportBody(SMALL_LIMIT);
      const both = heads(2, SMALL_LIMIT);
      await Promise.all(both.map((req) => req.write(body)));
      const answers = await Promise.all(both.map((req) => req.answer));
      for (const req of both) req.close();
      expect(answers.map((a) => a.status)).toEqual([201, 201]);
      expect(await bufferedBytesSettled(small)).toBe(0);
    });
  });

  describe('a body trickled below HTTP_BODY_MIN_BYTES_PER_SECOND (64 KiB/s here, after a 1 s grace)', () => {
    /** An API whose budget one body fills (limit = budget = 2 MiB), so a body held shows at once. */
    const LIMIT = 2 * MiB;
    let paced: BuiltApi;

    beforeAll(async () => {
      paced = await startR12Api('hearth-r12d', {
        HTTP_BODY_LIMIT_BYTES: String(LIMIT),
        HTTP_BODY_BUFFER_BUDGET_BYTES: String(LIMIT),
        HTTP_BODY_READ_GRACE_MS: '1000',
        HTTP_BODY_MIN_BYTES_PER_SECOND: String(64 * 1024),
      });
    });

    afterAll(async () => {
      await paced?.stop();
    });

    it('holds the budget only until it falls behind the pace: then 408 request_timeout, and the budget is free again', async () => {
      const trickler = new RawRequest(paced, 'POST', '/import/chat', {
        'content-type': 'application/json',
        'content-length': String(LIMIT),
      });
      // 1 KiB every 100 ms: 10 KiB/s, far behind 64 KiB/s.
      const trickling = (async () => {
        await trickler.write('{"data":"');
        while (!trickler.answered && (await trickler.write(Buffer.alloc(1024, 'x'))))
          await new Promise((resolve) => setTimeout(resolve, 100));
      })();
      await waitUntil(async () => (await bufferedBytes(paced)) === LIMIT);
      // Meanwhile the budget is full: another upload is refused at once.
      const other = new RawRequest(paced, 'POST', '/import/chat', {
        'content-type': 'application/json',
        'content-length': String(LIMIT),
      });
      expect((await other.answer).status).toBe(503);
      other.close();

      const answer = await trickler.answer;
      await trickling;
      trickler.close();
      expect(answer.status).toBe(408);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body).error.code).toBe('request_timeout');
      // Cut after the grace and a sweep (a few seconds: tens of KiB sent), not at Node's 300 s request timeout.
      expect(trickler.sent).toBeLessThan(LIMIT / 4);
      expect(await bufferedBytesSettled(paced)).toBe(0);

      // A body sent at full speed fills the budget alone and is imported.
      const fast = new RawRequest(paced, 'POST', '/import/chat', {
        'content-type': 'application/json',
        'content-length': String(LIMIT),
      });
      await fast.write(chatImportBody(LIMIT));
      const imported = await fast.answer;
      fast.close();
      expect(imported.status).toBe(201);
      expect(await bufferedBytesSettled(paced)).toBe(0);
    });
  });
});
