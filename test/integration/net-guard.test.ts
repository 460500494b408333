import { lookup as dnsLookup } from 'node:dns/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { DomainError } from '@hearth/domain';
import {
  createGuardedFetch,
  createLlmClient,
  findSsrfBlocked,
  LlmError,
  type GuardedFetch,
  type HostResolver,
  type LlmTarget,
  type NetGuardOptions,
  type ProviderKind,
} from '@hearth/platform';
import { Agent } from 'undici';
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';

/**
 * The network guard (issue 6 item 4) on real sockets: refusals happen at connect time in the undici
 * dispatcher, for literal hosts, names resolving to forbidden addresses, rebinding between two
 * connections and redirects; a sentinel listener on loopback proves no refused connection was made.
 */
describe('network guard', () => {
  let fake: FakeModelServer;
  let sentinel: TcpServer;
  let sentinelPort: number;
  let sentinelConnections = 0;
  let hopA: Server;
  let hopB: Server;
  let portA: number;
  let portB: number;
  const opened: GuardedFetch[] = [];
  const KEY = 'sk-guard-secret-key-0123456789abcdef';

  /** A tiny server: `/redirect?to=&status=`, `/echo` (method, headers, body as JSON), `/close`, `/loop`. */
  function hopServer(): Promise<Server> {
    const server = createHttpServer((req: IncomingMessage, res) => {
      const url = new URL(req.url ?? '/', 'http://hop');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (url.pathname === '/redirect') {
          res.writeHead(Number(url.searchParams.get('status') ?? 302), {
            location: url.searchParams.get('to') ?? '/',
          });
          res.end();
        } else if (url.pathname === '/loop') {
          res.writeHead(302, { location: '/loop' });
          res.end();
        } else if (url.pathname === '/close') {
          res.writeHead(200, { connection: 'close', 'content-type': 'text/plain' });
          res.end('closing');
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              method: req.method,
              headers: req.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        }
      });
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  }

  beforeAll(async () => {
    fake = await startFakeModelServer();
    sentinel = createTcpServer((socket) => {
      sentinelConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', resolve));
    sentinelPort = (sentinel.address() as AddressInfo).port;
    hopA = await hopServer();
    hopB = await hopServer();
    portA = (hopA.address() as AddressInfo).port;
    portB = (hopB.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(opened.map((f) => f.close()));
    await fake.close();
    await new Promise((resolve) => sentinel.close(resolve));
    await new Promise((resolve) => hopA.close(resolve));
    await new Promise((resolve) => hopB.close(resolve));
    // Every refusal above happened before a connection: the sentinel on loopback saw none.
    expect(sentinelConnections).toBe(0);
  });

  beforeEach(() => fake.reset());

  const guard = (options: NetGuardOptions): GuardedFetch => {
    const f = createGuardedFetch(options);
    opened.push(f);
    return f;
  };

  async function refusalOf(promise: Promise<unknown>): Promise<DomainError> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'ssrf_blocked', status: 400 });
    return error as DomainError;
  }

  describe('literal hosts and loopback names', () => {
    const blocked = guard({ allowPrivate: false });

    it.each([
      ['127.0.0.1', 'loopback'],
      ['localhost', 'loopback host name'],
      ['localhost.', 'loopback host name'],
      ['LocalHost', 'loopback host name'],
      ['[::1]', 'loopback'],
      ['2130706433', 'loopback'],
      ['0x7f.1', 'loopback'],
      ['017700000001', 'loopback'],
      ['127.1', 'loopback'],
      ['[::ffff:127.0.0.1]', 'IPv4-mapped form of a loopback'],
      ['[::ffff:7f00:1]', 'IPv4-mapped form of a loopback'],
      ['0.0.0.0', 'unspecified'],
    ])('refuses http://%s:<sentinel> (%s) without connecting', async (host, reason) => {
      const error = await refusalOf(blocked(`http://${host}:${sentinelPort}/v1/models`));
      expect(error.message).toContain(reason);
      expect(sentinelConnections).toBe(0);
    });

    it('the dispatcher alone refuses them too, at connect time (a caller that skips guardedFetch)', async () => {
      for (const host of ['127.0.0.1', '[::1]', 'localhost', '[::ffff:7f00:1]']) {
        const error = await fetch(`http://${host}:${sentinelPort}/`, {
          dispatcher: blocked.dispatcher,
        } as RequestInit).then(
          () => null,
          (e: unknown) => e,
        );
        expect((error as Error).message).toBe('fetch failed');
        expect(findSsrfBlocked(error)).toMatchObject({ code: 'ssrf_blocked', status: 400 });
      }
      expect(sentinelConnections).toBe(0);
    });

    it('refuses other schemes and credentials in the URL', async () => {
      expect((await refusalOf(blocked('file:///etc/passwd'))).message).toContain('scheme file:');
      expect((await refusalOf(blocked(`http://user:pw@example.com:${sentinelPort}/`))).message).toContain(
        'credentials',
      );
    });

    it('replaces a foreign dispatcher (the Gemini SDK adds one) by the guarded one', async () => {
      const foreign = new Agent();
      const init = { dispatcher: foreign } as RequestInit;
      await refusalOf(blocked(`http://127.0.0.1:${sentinelPort}/`, init));
      await foreign.close();
      expect(sentinelConnections).toBe(0);
    });
  });

  describe('names resolving to forbidden addresses', () => {
    it('refuses a public-looking name when ANY of its addresses is forbidden, without naming the address', async () => {
      const lookup: HostResolver = async (hostname) =>
        hostname === 'api.public.test'
          ? [
              { address: '93.184.216.34', family: 4 },
              { address: '10.0.0.5', family: 4 },
            ]
          : [{ address: '127.0.0.1', family: 4 }];
      const f = guard({ allowPrivate: false, lookup });
      const error = await refusalOf(f(`http://api.public.test:${sentinelPort}/v1`));
      expect(error.message).toBe(
        'Refused to connect to api.public.test: the host resolves to a private address',
      );
      expect(error.message).not.toContain('10.0.0.5');
      const nip = await refusalOf(f(`http://127.0.0.1.nip.io:${sentinelPort}/v1`));
      expect(nip.message).toContain('loopback');
    });

    it('refuses IPv6 answers: loopback, mapped loopback, link-local, unique local', async () => {
      for (const address of ['::1', '::ffff:127.0.0.1', 'fe80::1', 'fd00::7']) {
        const f = guard({ allowPrivate: false, lookup: async () => [{ address, family: 6 }] });
        await refusalOf(f(`http://v6.test:${sentinelPort}/`));
      }
    });

    it('refuses a name the system resolver maps to loopback', async () => {
      // dns.lookup('localhost') is loopback on every machine; the alias gets past the name check.
      const lookup: HostResolver = (hostname) =>
        dnsLookup(hostname === 'alias.test' ? 'localhost' : hostname, { all: true });
      const f = guard({ allowPrivate: false, lookup });
      expect((await refusalOf(f(`http://alias.test:${sentinelPort}/`))).message).toContain('loopback');
    });

    it('checks every new connection: a name that rebinds to a private address after the first lookup is refused', async () => {
      let calls = 0;
      const lookup: HostResolver = async () => {
        calls++;
        return [{ address: calls === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
      };
      // 127.0.0.1 stands in for a public address here.
      const f = guard({ allowPrivate: false, lookup, allowAddresses: ['127.0.0.1'] });
      const first = await f(`http://rebind.test:${portA}/close`);
      expect(first.status).toBe(200);
      expect(await first.text()).toBe('closing');
      // One resolution per connection: the socket went to the checked address, nothing resolved it again.
      expect(calls).toBe(1);
      // The server closed that connection (`connection: close`); the next one resolves again, now to a
      // private address.
      const error = await refusalOf(f(`http://rebind.test:${portA}/echo`));
      expect(error.message).toContain('private');
      expect(calls).toBe(2);
    });
  });

  describe('redirects', () => {
    // Only the first hop's server is let through, as the test hook allowHosts says.
    const hop = () =>
      guard({ allowPrivate: false, allowHosts: [`127.0.0.1:${portA}`, `127.0.0.1:${portB}`] });
    const via = (to: string, status = 302) =>
      `http://127.0.0.1:${portA}/redirect?status=${status}&to=${encodeURIComponent(to)}`;

    it.each([
      ['http://169.254.169.254/latest/meta-data/', 'link-local'],
      ['http://10.0.0.1/', 'private'],
      ['http://[::ffff:169.254.169.254]/', 'IPv4-mapped form of a link-local'],
      ['http://2130706433:SENTINEL/', 'loopback'],
      ['http://localhost:SENTINEL/', 'loopback host name'],
      ['file:///etc/passwd', 'scheme file:'],
    ])('refuses a redirect from an allowed server to %s', async (to, reason) => {
      const error = await refusalOf(hop()(via(to.replace('SENTINEL', String(sentinelPort)))));
      expect(error.message).toContain(reason);
    });

    it('refuses a redirect to a name that resolves to a private address', async () => {
      const f = guard({
        allowPrivate: false,
        allowHosts: [`127.0.0.1:${portA}`],
        lookup: async () => [{ address: '192.168.0.10', family: 4 }],
      });
      expect((await refusalOf(f(via('http://innocent.test/')))).message).toContain('private');
    });

    it('follows allowed redirects: 302 turns POST into GET, 307 keeps method and body', async () => {
      const f = hop();
      const seeOther = await f(via(`http://127.0.0.1:${portA}/echo`, 302), {
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(await seeOther.json()).toMatchObject({ method: 'GET', body: '' });
      const temporary = await f(via(`http://127.0.0.1:${portA}/echo`, 307), {
        method: 'POST',
        body: '{"a":1}',
      });
      expect(await temporary.json()).toMatchObject({ method: 'POST', body: '{"a":1}' });
    });

    it('drops credentials when a redirect changes origin, keeps them on the same origin', async () => {
      const f = hop();
      const headers = {
        authorization: `Bearer ${KEY}`,
        'x-api-key': KEY,
        'x-goog-api-key': KEY,
        'x-trace': 't1',
      };
      const same = (await (await f(via(`http://127.0.0.1:${portA}/echo`), { headers })).json()) as {
        headers: Record<string, string>;
      };
      expect(same.headers.authorization).toBe(`Bearer ${KEY}`);
      const cross = (await (await f(via(`http://127.0.0.1:${portB}/echo`), { headers })).json()) as {
        headers: Record<string, string>;
      };
      expect(cross.headers.authorization).toBeUndefined();
      expect(cross.headers['x-api-key']).toBeUndefined();
      expect(cross.headers['x-goog-api-key']).toBeUndefined();
      expect(cross.headers['x-trace']).toBe('t1');
    });

    it('stops after maxRedirects', async () => {
      const f = guard({ allowPrivate: false, allowHosts: [`127.0.0.1:${portA}`], maxRedirects: 3 });
      await expect(f(`http://127.0.0.1:${portA}/loop`)).rejects.toThrow('more than 3 redirects');
      expect((await f(via(`http://127.0.0.1:${portA}/echo`))).status).toBe(200);
    });
  });

  describe('ALLOW_PRIVATE_BASE_URL', () => {
    it('allowPrivate reaches the loopback fake model server, including through a redirect', async () => {
      const f = guard({ allowPrivate: true });
      const res = await f(`${fake.url}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(
        fake.models,
      );
      const redirected = await f(
        `http://127.0.0.1:${portA}/redirect?to=${encodeURIComponent(`${fake.url}/v1/models`)}`,
      );
      expect(redirected.status).toBe(200);
      expect(((await redirected.json()) as { data: unknown[] }).data).toHaveLength(fake.models.length);
    });
  });

  describe('the three SDKs through createLlmClient', () => {
    const providers: ProviderKind[] = ['openai', 'anthropic', 'google'];
    const target = (provider: ProviderKind): LlmTarget => ({
      provider,
      model: 'fake-model',
      apiKey: KEY,
      baseUrl: provider === 'openai' ? fake.openaiBaseUrl : fake.url,
    });
    const messages = [{ role: 'user' as const, content: 'ping' }];

    it.each(providers)('%s: works with allowPrivate', async (provider) => {
      const llm = createLlmClient({ fetch: guard({ allowPrivate: true }) });
      const result = await llm.generate({ target: target(provider), messages, params: {}, stream: false });
      expect(result.text).toBe('ECHO: ping');
      const streamed = await llm.generate({ target: target(provider), messages, params: {}, stream: true });
      expect(streamed.text).toBe('ECHO: ping');
      const models = await llm.listModels(target(provider));
      expect(models.map((m) => m.id)).toEqual(fake.models);
    });

    it.each(providers)(
      '%s: without it, 400 ssrf_blocked surfaces, no request is sent, no key in the message',
      async (provider) => {
        const llm = createLlmClient({ fetch: guard({ allowPrivate: false }) });
        for (const call of [
          () => llm.generate({ target: target(provider), messages, params: {}, stream: false }),
          () =>
            llm.generate({ target: target(provider), messages, params: { max_retries: 2 }, stream: true }),
          () => llm.listModels(target(provider)),
        ]) {
          const error = await call().then(
            () => null,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(LlmError);
          expect((error as LlmError).kind).toBe('network');
          expect((error as LlmError).message).toMatch(
            /^Refused to connect to 127\.0\.0\.1:\d+: loopback address$/,
          );
          const ssrf = findSsrfBlocked(error);
          expect(ssrf).toMatchObject({ code: 'ssrf_blocked', status: 400 });
          expect(ssrf!.message).not.toContain(KEY);
          expect((error as LlmError).message).not.toContain(KEY);
        }
        expect(fake.requests).toHaveLength(0);
      },
    );
  });
});
