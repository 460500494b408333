import { isIP } from 'node:net';
import { DomainError } from '@hearth/domain';
import { forbiddenAddressReason } from './forbidden-address';
import { ssrfBlocked } from './ssrf-error';

export interface UrlPolicyOptions {
  /** `ALLOW_PRIVATE_BASE_URL=true`: private, loopback and reserved addresses may be reached. */
  allowPrivate: boolean;
}

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/** The URL's host without IPv6 brackets and without the trailing dot of a fully-qualified name. */
export function bareHost(url: URL): string {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** `localhost` and `*.localhost` always mean this machine (RFC 6761), whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The checks that need no DNS, for one parsed URL: http or https only, a host, no credentials, and
 * (unless private addresses are allowed) no literal forbidden address or localhost name. Numeric host
 * spellings (`2130706433`, `0x7f.1`, `017700000001`, `127.1`) reach here already normalised to dotted
 * decimal by the WHATWG URL parser. Throws 400 `ssrf_blocked`.
 */
export function checkOutboundUrl(url: URL, options: UrlPolicyOptions): void {
  const shown = url.host || url.href.slice(0, 80);
  if (!ALLOWED_PROTOCOLS.has(url.protocol))
    throw ssrfBlocked(shown, `the scheme ${url.protocol} is not allowed (http or https only)`);
  if (!url.hostname) throw ssrfBlocked(shown, 'the URL has no host');
  if (url.username || url.password) throw ssrfBlocked(url.host, 'credentials in the URL are not allowed');
  if (options.allowPrivate) return;
  const host = bareHost(url);
  if (isIP(host)) {
    const reason = forbiddenAddressReason(host);
    if (reason) throw ssrfBlocked(url.host, reason);
  } else if (isLocalhostName(host)) {
    throw ssrfBlocked(url.host, 'loopback host name');
  }
}

/**
 * The write-time check of a profile's `base_url` (create and PATCH): parses the URL and applies
 * `checkOutboundUrl`. The real check stays at connect time, where every resolved address is checked
 * (a name can resolve anywhere, and differently later). Returns the parsed URL.
 */
export function validateBaseUrl(input: string, options: UrlPolicyOptions): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new DomainError('validation_error', 400, 'base_url is not a valid URL', {
      fields: [{ field: 'base_url', problems: ['must be an absolute http or https URL'] }],
    });
  }
  checkOutboundUrl(url, options);
  return url;
}
