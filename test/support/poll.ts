/**
 * Reads `read` every 20 ms until `done` holds for what it returned, or `ms` pass; returns the last
 * value read, so an assertion on it shows what was seen when the wait gave up.
 */
export async function pollUntil<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  ms = 3000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether `check` came to hold within `ms`. */
export const eventually = (check: () => Promise<boolean> | boolean, ms = 3000): Promise<boolean> =>
  pollUntil(check, (held) => held, ms);
