import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { SseWriter } from './sse-writer';

/**
 * The coalescing writer against a real socket: what a turn writes leaves in one write, and it leaves
 * before the next tick (Node corks a chunked response until then), so work queued behind the event as
 * microtasks (a turn's commit) cannot hold it back.
 */
describe('SseWriter (coalesce)', () => {
  let server: Server;
  let handler: (req: Request, res: Response) => void;

  beforeAll(async () => {
    const app = express();
    app.get('/', (req, res) => handler(req, res));
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  /** Runs `serve` as the handler and collects the whole response body. */
  async function exchange(serve: (req: Request, res: Response) => void): Promise<string> {
    handler = serve;
    const { port } = server.address() as AddressInfo;
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path: '/' }, resolve).on('error', reject).end(),
    );
    let body = '';
    res.setEncoding('utf8');
    for await (const part of res) body += part;
    return body;
  }

  it('hands the events of one synchronous run to the socket in a microtask, uncorked', async () => {
    const seen: { corked: number; written: number; beforeFlush: number }[] = [];
    const body = await exchange((req, res) => {
      const writer = new SseWriter(req, res, { heartbeatMs: 60_000, coalesce: true });
      const socket = req.socket;
      const beforeFlush = socket.bytesWritten;
      writer.send([{ sequence: 1, type: 'start', data: '{}' }]);
      writer.send([{ sequence: 2, type: 'chunk', data: '{"chunk":"a"}' }]);
      // The microtask the first write queued has run before this one (FIFO), the next tick has not.
      queueMicrotask(() => {
        seen.push({ corked: socket.writableCorked, written: socket.bytesWritten, beforeFlush });
        writer.end();
      });
    });
    expect(seen).toHaveLength(1);
    expect(seen[0].corked).toBe(0);
    expect(seen[0].written).toBeGreaterThan(seen[0].beforeFlush);
    expect(body).toBe(
      'retry: 2000\n\nid: 1\nevent: start\ndata: {}\n\nid: 2\nevent: chunk\ndata: {"chunk":"a"}\n\n',
    );
  });

  it('keeps the events in order across flushes and writes what is pending with the end', async () => {
    const body = await exchange((req, res) => {
      const writer = new SseWriter(req, res, { heartbeatMs: 60_000, coalesce: true });
      writer.send([{ sequence: 1, type: 'chunk', data: '"a"' }]);
      void Promise.resolve().then(() => {
        writer.send([{ sequence: 2, type: 'chunk', data: '"b"' }]);
        writer.send([{ sequence: 3, type: 'done', data: '{}' }]);
        writer.end();
      });
    });
    expect(body).toBe(
      'retry: 2000\n\nid: 1\nevent: chunk\ndata: "a"\n\nid: 2\nevent: chunk\ndata: "b"\n\nid: 3\nevent: done\ndata: {}\n\n',
    );
  });

  it('without coalescing, writes each event at once, uncorked', async () => {
    const seen: number[] = [];
    const body = await exchange((req, res) => {
      const writer = new SseWriter(req, res, { heartbeatMs: 60_000 });
      writer.send([{ sequence: 1, type: 'project.event', data: '{}' }]);
      seen.push(req.socket.writableCorked);
      writer.end();
    });
    expect(seen).toEqual([0]);
    expect(body).toBe('retry: 2000\n\nid: 1\nevent: project.event\ndata: {}\n\n');
  });
});
