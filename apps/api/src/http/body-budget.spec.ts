import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { BodyBufferBudget, holdRequestBody } from './body-budget';

/** A request with the given headers; `pause` and `socket` are all a hold touches besides events. */
function fakeRequest(headers: Record<string, string>) {
  const socket = Object.assign(new EventEmitter(), {
    destroyed: false,
    destroy: jest.fn(),
    bytesRead: 0,
    end: jest.fn(),
  });
  return Object.assign(new EventEmitter(), { headers, socket, pause: jest.fn(), complete: false });
}

/** A response that records what was answered. */
function fakeResponse() {
  const sent: { status?: number; body?: unknown; headers: Record<string, string> } = { headers: {} };
  const res = Object.assign(new EventEmitter(), {
    headersSent: false,
    sent,
    setHeader(name: string, value: string) {
      sent.headers[name.toLowerCase()] = value;
    },
    status(code: number) {
      sent.status = code;
      return res;
    },
    json(body: unknown) {
      sent.body = body;
      res.headersSent = true;
      return res;
    },
  });
  return res;
}

const hold = (
  budget: BodyBufferBudget,
  headers: Record<string, string>,
  options = { maxBytes: 1000, meter: true, inflates: true },
) => {
  const req = fakeRequest(headers);
  const res = fakeResponse();
  const held = holdRequestBody(budget, req as unknown as Request, res as unknown as Response, options);
  return { req, res, held };
};

describe('BodyBufferBudget', () => {
  it('reserves while the total fits, exactly up to the capacity, and reports each change to the gauge', () => {
    const gauge = { set: jest.fn() };
    const budget = new BodyBufferBudget(100, gauge);
    expect(budget.tryReserve(60)).toBe(true);
    expect(budget.tryReserve(41)).toBe(false);
    expect(budget.heldBytes).toBe(60);
    expect(budget.tryReserve(40)).toBe(true);
    expect(budget.heldBytes).toBe(100);
    budget.release(60);
    budget.release(40);
    expect(budget.heldBytes).toBe(0);
    expect(gauge.set.mock.calls.map(([value]) => value as number)).toEqual([60, 100, 40, 0]);
  });
});

describe('holdRequestBody', () => {
  it('a declared length reserves exactly that, once; release is idempotent and the response closing releases too', () => {
    const budget = new BodyBufferBudget(1000);
    const first = hold(budget, { 'content-length': '600' });
    expect(budget.heldBytes).toBe(600);
    expect(first.req.listenerCount('data')).toBe(0);
    // Does not fit: nothing reserved, nothing answered (the caller answers 503).
    const second = hold(budget, { 'content-length': '401' });
    expect(second.held).toBeNull();
    expect(second.res.sent.status).toBeUndefined();
    expect(budget.heldBytes).toBe(600);

    first.held!.release();
    first.held!.release();
    first.res.emit('close');
    expect(budget.heldBytes).toBe(0);

    const third = hold(budget, { 'content-length': '1000' });
    expect(budget.heldBytes).toBe(1000);
    third.res.emit('close');
    expect(budget.heldBytes).toBe(0);
  });

  it('a compressed body reserves the most it may inflate to; a reader that does not inflate reserves its length', () => {
    const budget = new BodyBufferBudget(5000);
    hold(budget, { 'content-length': '10', 'content-encoding': 'gzip' });
    expect(budget.heldBytes).toBe(1000);
    hold(
      budget,
      { 'content-length': '10', 'content-encoding': 'gzip' },
      { maxBytes: 1000, meter: false, inflates: false },
    );
    expect(budget.heldBytes).toBe(1010);
  });

  it('a chunked body a reader does not meter reserves its maximum, cut to the whole budget', () => {
    const budget = new BodyBufferBudget(800);
    const { held } = hold(
      budget,
      { 'transfer-encoding': 'chunked' },
      { maxBytes: 1000, meter: false, inflates: false },
    );
    expect(budget.heldBytes).toBe(800);
    held!.release();
    expect(budget.heldBytes).toBe(0);
  });

  it('a metered chunked body reserves chunk by chunk; the chunk over the budget is answered 503 with Connection: close, and counted until the socket closes', () => {
    const budget = new BodyBufferBudget(1000);
    budget.tryReserve(700);
    const { req, res, held } = hold(budget, { 'transfer-encoding': 'chunked' });
    expect(budget.heldBytes).toBe(700);
    req.emit('data', Buffer.alloc(200));
    expect(budget.heldBytes).toBe(900);
    expect(held!.answered).toBe(false);

    req.emit('data', Buffer.alloc(200));
    expect(held!.answered).toBe(true);
    expect(req.pause).toHaveBeenCalled();
    expect(res.sent).toMatchObject({
      status: 503,
      headers: { connection: 'close', 'retry-after': '1' },
      body: { error: { code: 'resource_busy' } },
    });
    expect(req.listenerCount('data')).toBe(0);
    // The response closing does not release it (body-parser may still hold the bytes); the socket does.
    res.emit('close');
    expect(budget.heldBytes).toBe(900);
    req.socket.emit('close');
    expect(budget.heldBytes).toBe(700);
  });

  it('a metered chunked body past the reader limit is answered 413 at once', () => {
    const budget = new BodyBufferBudget(10_000);
    const { req, res, held } = hold(budget, { 'transfer-encoding': 'chunked' });
    req.emit('data', Buffer.alloc(1000));
    expect(held!.answered).toBe(false);
    req.emit('data', Buffer.alloc(1));
    expect(res.sent).toMatchObject({
      status: 413,
      headers: { connection: 'close' },
      body: { error: { code: 'payload_too_large' } },
    });
    held!.release();
    expect(budget.heldBytes).toBe(0);
  });
});

describe('the minimum pace of a body (HTTP_BODY_MIN_BYTES_PER_SECOND after HTTP_BODY_READ_GRACE_MS)', () => {
  const T0 = 1_700_000_000_000;
  afterEach(() => jest.restoreAllMocks());

  const paced = (minBytesPerSecond: number) => {
    jest.spyOn(Date, 'now').mockReturnValue(T0);
    const budget = new BodyBufferBudget(10_000, undefined, { minBytesPerSecond, graceMs: 2_000 });
    const held = hold(
      budget,
      { 'content-length': '5000' },
      { maxBytes: 10_000, meter: false, inflates: false },
    );
    return { budget, ...held };
  };

  it('lets a body keep its share through the grace and at exactly the pace, and answers 408 just behind it', () => {
    const { budget, req, res, held } = paced(1000);
    expect(budget.heldBytes).toBe(5000);
    budget.sweep(T0 + 2_000);
    req.socket.bytesRead = 1000;
    budget.sweep(T0 + 3_000);
    expect(res.sent.status).toBeUndefined();
    expect(held!.answered).toBe(false);
    budget.sweep(T0 + 3_001);
    expect(res.sent.status).toBe(408);
    expect(res.sent.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
    expect(res.sent.headers.connection).toBe('close');
    expect(held!.answered).toBe(true);
    expect(req.pause).toHaveBeenCalled();
    // Its share is freed once the connection is gone, as for a 413 or 503.
    req.socket.emit('close');
    expect(budget.heldBytes).toBe(0);
    budget.sweep(T0 + 60_000);
    expect(res.sent.status).toBe(408);
  });

  it('stops watching a body once it has arrived: the handler may take its time', () => {
    const { budget, req, res } = paced(1000);
    req.emit('end');
    budget.sweep(T0 + 600_000);
    expect(res.sent.status).toBeUndefined();
    expect(budget.heldBytes).toBe(5000);
  });

  it('stops watching a released body, and a pace of 0 watches nothing', () => {
    const first = paced(1000);
    first.held!.release();
    first.budget.sweep(T0 + 600_000);
    expect(first.res.sent.status).toBeUndefined();
    const off = paced(0);
    off.budget.sweep(T0 + 600_000);
    expect(off.res.sent.status).toBeUndefined();
    expect(off.budget.heldBytes).toBe(5000);
  });
});
