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

/**
 * Reads `probe` every 20 ms until it returns a truthy value, and returns that value; throws
 * `timed out waiting for <what>` if none came within `ms`.
 */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  what: string,
  ms = 15_000,
): Promise<Exclude<T, undefined | null | false>> {
  const value = await pollUntil(probe, Boolean, ms);
  if (!value) throw new Error(`timed out waiting for ${what}`);
  return value as Exclude<T, undefined | null | false>;
}
