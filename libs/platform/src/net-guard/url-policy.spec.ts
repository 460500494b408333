import { DomainError } from '@hearth/domain';
import { findSsrfBlocked, isSsrfBlocked, ssrfBlocked } from './ssrf-error';
import { validateBaseUrl } from './url-policy';

function refusal(url: string, allowPrivate = false): DomainError | null {
  try {
    validateBaseUrl(url, { allowPrivate });
    return null;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

describe('validateBaseUrl', () => {
  // Spellings of loopback, private, link-local and reserved hosts; the WHATWG parser normalises the
  // numeric ones (decimal, octal, hex, short, percent-encoded, full-width) to dotted decimal first.
  it.each([
    ['http://127.0.0.1', 'loopback'],
    ['https://127.0.0.1:8443/v1', 'loopback'],
    ['http://2130706433', 'loopback'],
    ['http://0x7f.1', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://017700000001', 'loopback'],
    ['http://0177.0.0.1', 'loopback'],
    ['http://127.1', 'loopback'],
    ['http://127.0.1', 'loopback'],
    ['http://127.0.0.1./v1', 'loopback'],
    ['http://%31%32%37.0.0.1', 'loopback'],
    ['http://①②⑦.0.0.1', 'loopback'],
    ['http://localhost:11434', 'loopback host name'],
    ['http://LOCALHOST', 'loopback host name'],
    ['http://localhost./', 'loopback host name'],
    ['http://ollama.localhost', 'loopback host name'],
    ['http://[::1]:8080', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]', 'loopback'],
    ['http://[::]', 'unspecified'],
    ['http://0.0.0.0', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::ffff:127.0.0.1]', 'IPv4-mapped form of a loopback'],
    ['http://[::ffff:7f00:1]', 'IPv4-mapped form of a loopback'],
    ['http://[::ffff:169.254.169.254]/latest', 'IPv4-mapped form of a link-local'],
    ['http://[64:ff9b::7f00:1]', 'NAT64 form of a loopback'],
    ['http://[2002:c0a8:101::1]', '6to4 form of a private'],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'Teredo'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://10.0.0.1', 'private'],
    ['http://172.16.0.1', 'private'],
    ['http://172.31.255.255', 'private'],
    ['http://192.168.1.1', 'private'],
    ['http://100.64.0.1', 'carrier-grade NAT'],
    ['http://198.18.0.1', 'benchmarking'],
    ['http://192.0.2.1', 'documentation'],
    ['http://224.0.0.1', 'multicast'],
    ['http://255.255.255.255', 'broadcast'],
    ['http://[fe80::1]', 'link-local'],
    ['http://[fd00::1]', 'unique local'],
    ['http://[ff02::1]', 'multicast'],
    ['http://api.openai.com@127.0.0.1/v1', 'credentials'],
    ['http://127.0.0.1@api.openai.com/v1', 'credentials'],
    ['https://user:pass@api.openai.com/v1', 'credentials'],
    ['file:///etc/passwd', 'scheme file:'],
    ['gopher://127.0.0.1:70/_', 'scheme gopher:'],
    ['ftp://example.com/', 'scheme ftp:'],
    ['ws://example.com/', 'scheme ws:'],
    ['data:text/plain,hello', 'scheme data:'],
    ['javascript:alert(1)', 'scheme javascript:'],
  ])('refuses %s (%s)', (url, reason) => {
    const error = refusal(url);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'ssrf_blocked', status: 400 });
    expect(error!.message).toMatch(/^Refused to connect to /);
    expect(error!.message).toContain(reason);
  });

  it.each([
    'https://api.openai.com/v1',
    'https://api.anthropic.com',
    'https://generativelanguage.googleapis.com',
    'http://8.8.8.8:8080/v1',
    'http://[2606:4700:4700::1111]/v1',
    'http://[::ffff:8.8.8.8]',
    'http://172.32.0.1',
    'http://100.128.0.1',
    // A name is not resolved here: the connect-time check refuses it if it resolves to a private address.
    'https://127.0.0.1.nip.io/v1',
    'https://internal.example.com',
  ])('accepts %s', (url) => {
    expect(refusal(url)).toBeNull();
  });

  it('with allowPrivate accepts private and loopback hosts, never other schemes or credentials', () => {
    for (const url of [
      'http://127.0.0.1:11434/v1',
      'http://localhost:8080',
      'http://[::1]',
      'http://10.1.2.3',
    ])
      expect(refusal(url, true)).toBeNull();
    expect(refusal('file:///etc/passwd', true)?.code).toBe('ssrf_blocked');
    expect(refusal('http://u:p@127.0.0.1', true)?.code).toBe('ssrf_blocked');
  });

  it('answers 400 validation_error for a string that is not a URL', () => {
    for (const bad of ['not a url', '', 'http://', '//example.com', 'http://[::1']) {
      const error = refusal(bad);
      expect(error).toMatchObject({ code: 'validation_error', status: 400 });
    }
  });

  it('returns the parsed URL', () => {
    expect(validateBaseUrl('https://API.example.com/v1', { allowPrivate: false }).hostname).toBe(
      'api.example.com',
    );
  });
});

describe('findSsrfBlocked', () => {
  it('finds the refusal through causes and aggregate errors, and nothing elsewhere', () => {
    const refusalError = ssrfBlocked('evil.test', 'private address');
    const wrapped = new Error('Connection error.', {
      cause: new TypeError('fetch failed', { cause: refusalError }),
    });
    expect(findSsrfBlocked(wrapped)).toBe(refusalError);
    expect(findSsrfBlocked(new AggregateError([new Error('x'), refusalError]))).toBe(refusalError);
    expect(isSsrfBlocked(refusalError)).toBe(true);
    expect(isSsrfBlocked(new Error('fetch failed', { cause: new Error('ECONNREFUSED') }))).toBe(false);
    expect(isSsrfBlocked(new DomainError('validation_error', 400, 'x'))).toBe(false);
    expect(isSsrfBlocked(null)).toBe(false);
    expect(isSsrfBlocked('ssrf_blocked')).toBe(false);
    const loop: { cause?: unknown } = {};
    loop.cause = loop;
    expect(isSsrfBlocked(loop)).toBe(false);
  });
});
