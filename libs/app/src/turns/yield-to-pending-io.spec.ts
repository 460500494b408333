import { yieldToPendingIo } from './yield-to-pending-io';

describe('yieldToPendingIo', () => {
  it('resolves after callbacks already queued for the event loop, not before', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('queued callback'));
    void Promise.resolve().then(() => order.push('microtask'));
    await yieldToPendingIo();
    order.push('after the yield');
    expect(order).toEqual(['microtask', 'queued callback', 'after the yield']);
  });
});
