import { DomainError } from '@hearth/domain';
import { GenerationSlots } from './generation-slots';

describe('GenerationSlots', () => {
  it('grants up to the limit at once, then in arrival order as slots are released', async () => {
    const slots = new GenerationSlots(2);
    const a = await slots.acquire(1_000);
    const b = await slots.acquire(1_000);
    const order: string[] = [];
    const c = slots.acquire(1_000).then((release) => (order.push('c'), release));
    const d = slots.acquire(1_000).then((release) => (order.push('d'), release));
    expect(slots.load).toEqual({ active: 2, waiting: 2 });
    a();
    a(); // a second call of the same release changes nothing
    const releaseC = await c;
    expect(order).toEqual(['c']);
    expect(slots.load).toEqual({ active: 2, waiting: 1 });
    b();
    const releaseD = await d;
    expect(order).toEqual(['c', 'd']);
    releaseC();
    releaseD();
    expect(slots.load).toEqual({ active: 0, waiting: 0 });
  });

  it('rejects a waiter after its timeout with 503 generation_queue_timeout and forgets it', async () => {
    const slots = new GenerationSlots(1);
    const held = await slots.acquire(1_000);
    const waited = slots.acquire(20);
    await expect(waited).rejects.toBeInstanceOf(DomainError);
    await expect(waited).rejects.toMatchObject({ code: 'generation_queue_timeout', status: 503 });
    expect(slots.load).toEqual({ active: 1, waiting: 0 });
    held();
    expect(slots.load).toEqual({ active: 0, waiting: 0 });
    const again = await slots.acquire(20);
    again();
  });
});
