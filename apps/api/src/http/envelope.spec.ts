import express, { type Response } from 'express';
import request from 'supertest';
import { DataList, EnvelopeExpressAdapter, Raw, ROUTE_ENVELOPE } from './envelope';

type Case = {
  name: string;
  value: () => unknown;
  status?: number;
  style?: 'data' | 'bare';
  before?: (res: Response) => void;
};

const CASES: Case[] = [
  { name: 'an object in {data}', value: () => ({ a: 1, s: 'é ✓ <>&' }) },
  { name: 'a bare object with status 201', value: () => ({ item: { id: 'x' } }), style: 'bare', status: 201 },
  { name: 'a list', value: () => new DataList([{ a: 1 }, { b: 2 }], { next_cursor: null }) },
  { name: 'a body over 1000 bytes', value: () => ({ text: 'ü'.repeat(3000) }), style: 'bare' },
  { name: 'a bare array', value: () => [1, 'two', null], style: 'bare' },
  { name: 'a Raw string', value: () => new Raw('plain text') },
  { name: 'a Raw number', value: () => new Raw(42) },
  { name: 'undefined', value: () => undefined },
  { name: 'a toJSON that answers undefined', value: () => new Raw({ toJSON: () => undefined }) },
  { name: 'status 204', value: () => ({ a: 1 }), style: 'bare', status: 204 },
  { name: 'status 205', value: () => ({ a: 1 }), style: 'bare', status: 205 },
  {
    name: 'a Content-Type set by the handler',
    value: () => ({ a: 1 }),
    style: 'bare',
    before: (res) => res.setHeader('Content-Type', 'application/vnd.custom+json'),
  },
  {
    name: 'a Last-Modified set by the handler',
    value: () => ({ a: 1 }),
    style: 'bare',
    before: (res) => res.setHeader('Last-Modified', 'Sun, 22 Nov 2026 00:00:00 GMT'),
  },
];

/**
 * Two routes per case on one Express app configured like the API's: one replies through the
 * adapter (the direct JSON path when it applies), the other through Nest's own ExpressAdapter
 * (`res.json` / `res.send`) with the same rendered body, so their answers can be compared byte
 * for byte.
 */
function appFor(configure: (app: express.Express) => void) {
  const adapter = new EnvelopeExpressAdapter();
  const app = express();
  configure(app);
  CASES.forEach((c, i) => {
    const route = (fast: boolean) => (req: express.Request, res: Response) => {
      (req as unknown as Record<symbol, unknown>)[ROUTE_ENVELOPE] = c.style ?? 'data';
      c.before?.(res);
      const value = c.value();
      if (fast) adapter.reply(res, value, c.status ?? 200);
      else {
        // The path before the direct one: Nest's reply with the rendered envelope.
        const rendered =
          value instanceof Raw
            ? value.value
            : value === undefined
              ? undefined
              : c.style === 'bare'
                ? value
                : value instanceof DataList
                  ? { data: value.items, meta: value.meta }
                  : { data: value };
        Object.getPrototypeOf(EnvelopeExpressAdapter.prototype).reply.call(
          adapter,
          res,
          rendered,
          c.status ?? 200,
        );
      }
    };
    app.get(`/fast/${i}`, route(true));
    app.get(`/slow/${i}`, route(false));
  });
  return app;
}

const withoutDate = (headers: Record<string, unknown>) => {
  const copy = { ...headers };
  delete copy.date;
  return copy;
};

async function compare(app: express.Express, method: 'get' | 'head', headers: Record<string, string> = {}) {
  for (let i = 0; i < CASES.length; i++) {
    const send = (kind: string) => {
      const req = request(app)[method](`/${kind}/${i}`);
      for (const [k, v] of Object.entries(headers)) req.set(k, v);
      return req.buffer(true).parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    };
    const [fast, slow] = [await send('fast'), await send('slow')];
    expect({ case: CASES[i].name, status: fast.status }).toEqual({
      case: CASES[i].name,
      status: slow.status,
    });
    expect(withoutDate(fast.headers)).toEqual(withoutDate(slow.headers));
    const bytes = (body: unknown) => (Buffer.isBuffer(body) ? body : Buffer.alloc(0));
    expect(bytes(fast.body).equals(bytes(slow.body))).toBe(true);
    // The bytes were read whole (HEAD and bodiless statuses have none).
    if (method === 'get' && ![204, 205, 304].includes(slow.status))
      expect(bytes(fast.body).length).toBe(Number(fast.headers['content-length'] ?? 0));
  }
}

describe('EnvelopeExpressAdapter: the direct JSON reply answers what Express would', () => {
  const apiLike = appFor((app) => {
    app.disable('x-powered-by');
    app.set('etag', false);
  });

  it('sends the same status, headers and bytes for every kind of value', async () => {
    await compare(apiLike, 'get');
    const json = jest.spyOn(express.response, 'json');
    const res = await request(apiLike).get('/fast/0').expect(200);
    // Written directly, not through res.json.
    expect(json).not.toHaveBeenCalled();
    json.mockRestore();
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(res.body))));
    expect(res.body).toEqual({ data: { a: 1, s: 'é ✓ <>&' } });
  });

  it('answers HEAD and conditional requests as Express does', async () => {
    await compare(apiLike, 'head');
    await compare(apiLike, 'get', { 'if-none-match': '*' });
    await compare(apiLike, 'get', { 'if-modified-since': 'Mon, 23 Nov 2026 00:00:00 GMT' });
    // `If-None-Match: *` makes a GET fresh: 304 without a body, on both paths.
    await request(apiLike).get('/fast/0').set('if-none-match', '*').expect(304);
  });

  it('leaves the reply to Express when ETags or JSON settings are enabled on the app', async () => {
    const etags = appFor(() => undefined);
    await compare(etags, 'get');
    expect((await request(etags).get('/fast/0').expect(200)).headers.etag).toBeDefined();
    const spaced = appFor((app) => {
      app.set('etag', false);
      app.set('json spaces', 2);
    });
    await compare(spaced, 'get');
    expect((await request(spaced).get('/fast/0').expect(200)).text).toContain('\n  "data"');
    const escaped = appFor((app) => {
      app.set('etag', false);
      app.set('json escape', true);
    });
    await compare(escaped, 'get');
    expect((await request(escaped).get('/fast/0').expect(200)).text).toContain('\\u003c');
  });
});
