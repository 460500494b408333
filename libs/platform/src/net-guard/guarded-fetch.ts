import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { forbiddenAddressReason } from './forbidden-address';
import { findSsrfBlocked, ssrfBlocked } from './ssrf-error';
import { checkOutboundUrl, isLocalhostName } from './url-policy';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup`). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface NetGuardOptions {
  /** `ALLOW_PRIVATE_BASE_URL=true` (or an allowed `allow_private_network`): no address check. */
  allowPrivate: boolean;
  /** Redirects followed by `guardedFetch`, each re-checked (default 5). */
  maxRedirects?: number;
  /** Test hook: the resolver used at connect time instead of the system's. */
  lookup?: HostResolver;
  /** Test hook: `host:port` pairs reached without any check (a loopback fake server). */
  allowHosts?: string[];
  /** Test hook: addresses the address check lets through (a loopback stand-in for a public address). */
  allowAddresses?: string[];
  /** undici connect timeout (ms, default 10 000). */
  connectTimeoutMs?: number;
}

export type GuardedFetch = typeof fetch & {
  /** The undici dispatcher every request of this fetch goes through. */
  readonly dispatcher: Agent;
  /** Closes the dispatcher's pooled connections. */
  close(): Promise<void>;
};

const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, order: 'verbatim' });

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: never sent on to another origin by a redirect. */
const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
];

type ConnectOptions = Parameters<ReturnType<typeof buildConnector>>[0];
type ConnectCallback = Parameters<ReturnType<typeof buildConnector>>[1];

const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

/**
 * A refusal as the socket layer reports it: a plain Error whose cause is the `ssrf_blocked`
 * DomainError. fetch keeps only errors that look like plain Errors as the `cause` of its `fetch failed`
 * (others it turns into a string), and across realms (jest's sandbox) a DomainError does not.
 */
function connectRefusal(host: string, reason: string): Error {
  const refusal = ssrfBlocked(host, reason);
  return Object.assign(new Error(refusal.message, { cause: refusal }), { code: refusal.code });
}

/**
 * The undici dispatcher of the network guard. Every connection resolves its host through `lookup`,
 * refuses it when ANY resolved address is forbidden, and hands exactly the checked addresses to the
 * socket, so the connection is pinned to what was checked and DNS rebinding between check and connect
 * is impossible. Literal IP hosts (which never reach a lookup) are checked before connecting. undici 7
 * dispatchers follow no redirects (there is no redirect interceptor here): `guardedFetch` follows them
 * itself, re-checking each.
 */
export function createGuardedDispatcher(options: NetGuardOptions): Agent {
  const resolve = options.lookup ?? systemResolver;
  const allowHosts = new Set(options.allowHosts ?? []);
  const allowAddresses = new Set(options.allowAddresses ?? []);
  const timeout = options.connectTimeoutMs ?? 10_000;

  const refusal = (address: string): string | null =>
    options.allowPrivate || allowAddresses.has(address) ? null : forbiddenAddressReason(address);

  const guardedLookup = ((
    hostname: string,
    lookupOptions: { all?: boolean; family?: number | string },
    callback,
  ) => {
    const done = callback as (error: Error | null, address?: unknown, family?: number) => void;
    resolve(hostname)
      .then((resolved) => {
        const wanted = Number(lookupOptions.family) || 0;
        const addresses = wanted ? resolved.filter((a) => a.family === wanted) : resolved;
        if (addresses.length === 0) {
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
            code: 'ENOTFOUND',
            hostname,
          });
        }
        // Every address, not just the first: the socket may try any of them (happy eyeballs).
        for (const { address } of resolved) {
          const reason = refusal(address);
          if (reason) throw connectRefusal(hostname, `the host resolves to a ${reason}`);
        }
        if (lookupOptions.all) done(null, addresses);
        else done(null, addresses[0].address, addresses[0].family);
      })
      .catch((error: Error) => done(error));
  }) as LookupFunction;

  const guarded = buildConnector({ timeout, lookup: guardedLookup } as buildConnector.BuildOptions);
  const plain = buildConnector({ timeout } as buildConnector.BuildOptions);

  const connect = (connectOptions: ConnectOptions, callback: ConnectCallback) => {
    const { hostname, protocol } = connectOptions;
    const port = connectOptions.port || defaultPort(protocol);
    if (allowHosts.has(`${hostname}:${port}`)) return plain(connectOptions, callback);
    if (!options.allowPrivate) {
      const reason = isIP(hostname)
        ? refusal(hostname)
        : isLocalhostName(hostname)
          ? 'loopback host name'
          : null;
      if (reason) {
        callback(connectRefusal(hostname, reason), null);
        return;
      }
    }
    return guarded(connectOptions, callback);
  };

  return new Agent({ connect: connect as buildConnector.connector });
}

function replayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof URLSearchParams ||
    body instanceof Blob ||
    body instanceof FormData
  );
}

/**
 * A `fetch` for user-given URLs: http/https only, every connection through the guarded dispatcher,
 * redirects followed by hand (at most `maxRedirects`), each new URL checked again and credentials
 * dropped when the origin changes. A foreign `dispatcher` in the init (the Gemini SDK adds Node's
 * global one) is replaced. A refusal rejects with the 400 `ssrf_blocked` DomainError itself.
 */
export function createGuardedFetch(options: NetGuardOptions): GuardedFetch {
  const dispatcher = createGuardedDispatcher(options);
  const maxRedirects = options.maxRedirects ?? 5;
  const allowHosts = new Set(options.allowHosts ?? []);

  const guardedFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const {
      dispatcher: _foreign,
      redirect: _redirect,
      ...rest
    } = init as RequestInit & { dispatcher?: unknown };
    const request = input instanceof Request ? input : null;
    let url = new URL(request ? request.url : String(input));
    let method = (rest.method ?? request?.method ?? 'GET').toUpperCase();
    const headers = new Headers(rest.headers ?? request?.headers);
    let body: unknown = rest.body ?? (request?.body ? await request.arrayBuffer() : undefined);
    const signal = rest.signal ?? request?.signal;

    for (let hop = 0; ; hop++) {
      const exempt = allowHosts.has(`${url.hostname}:${url.port || defaultPort(url.protocol)}`);
      checkOutboundUrl(url, { allowPrivate: options.allowPrivate || exempt });
      let response: Response;
      try {
        response = await fetch(url, {
          ...rest,
          method,
          headers,
          body: body as RequestInit['body'],
          signal,
          redirect: 'manual',
          dispatcher,
        } as RequestInit);
      } catch (error) {
        throw findSsrfBlocked(error) ?? error;
      }
      const location = response.headers.get('location');
      if (!REDIRECT_STATUSES.has(response.status) || !location) return response;
      await response.body?.cancel();
      if (hop >= maxRedirects) throw new TypeError(`fetch failed: more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language'])
          headers.delete(name);
      } else if (!replayable(body)) {
        throw new TypeError('fetch failed: cannot repeat a streamed body on a redirect');
      }
      if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      url = next;
    }
  };

  return Object.assign(guardedFetch as typeof fetch, {
    dispatcher,
    close: () => dispatcher.close(),
  });
}
