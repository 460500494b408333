import { LruMap } from '@hearth/domain';

/** Clients kept per process: at most this many per fetch function, the least recently used dropped. */
const MAX_CLIENTS = 64;
const NO_FETCH = {};
const byFetch = new WeakMap<object, LruMap<string, unknown>>();

/**
 * The SDK client for one fetch function and one `key` (provider, base URL, API key, retries), made
 * once and reused: building an SDK client allocates its whole resource tree, which per turn is a
 * measurable share of a streamed turn's CPU (docs/decisions.md "Turn latency"). The clients are
 * stateless between calls (each call gets its own signal), so sharing them between turns is safe.
 */
export function cachedSdkClient<T>(fetchFn: object | undefined, key: string, create: () => T): T {
  const owner = fetchFn ?? NO_FETCH;
  let clients = byFetch.get(owner);
  if (!clients) {
    clients = new LruMap(MAX_CLIENTS);
    byFetch.set(owner, clients);
  }
  let client = clients.get(key) as T | undefined;
  if (client === undefined) {
    client = create();
    clients.set(key, client);
  }
  return client;
}

/** The cache key of a target's client. */
export const sdkClientKey = (...parts: Array<string | number | undefined | null>): string =>
  JSON.stringify(parts);
