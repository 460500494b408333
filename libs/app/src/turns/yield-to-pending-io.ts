/**
 * Resolves in the event loop's next check phase, after the I/O that has already arrived: the model
 * chunks of the other turns, waiting to be forwarded to their clients. Awaited before a turn's
 * CPU-heavy steps (prompt assembly, the commit), so a turn that starts or ends does not hold back the
 * chunks of the streams already running (docs/decisions.md "Turn latency"). Costs one turn of the
 * event loop, a few microseconds when nothing is waiting.
 */
export function yieldToPendingIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
