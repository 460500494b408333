import { forbiddenAddressReason, isForbiddenAddress, parseIPv4, parseIPv6 } from './forbidden-address';

describe('isForbiddenAddress', () => {
  it.each([
    // IPv4: every refused range, at its first and last address where it matters.
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.0', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.0.1', 'private'],
    ['198.18.0.0', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // IPv6.
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456:789a::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'IETF protocol assignment'],
    ['2001:20::1', 'IETF protocol assignment'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    // IPv6 forms carrying a forbidden IPv4 address.
    ['::ffff:127.0.0.1', 'IPv4-mapped form of a loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped form of a loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped form of a link-local'],
    ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped form of a private'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated form of a loopback'],
    ['::127.0.0.1', 'IPv4-compatible form of a loopback'],
    ['::7f00:1', 'IPv4-compatible form of a loopback'],
    ['64:ff9b::127.0.0.1', 'NAT64 form of a loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 form of a link-local'],
    ['2002:7f00:1::', '6to4 form of a loopback'],
    ['2002:c0a8:101::1', '6to4 form of a private'],
    // Not an address at all: refused.
    ['localhost', 'not an IP address'],
    ['', 'not an IP address'],
    ['127.1', 'not an IP address'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(isForbiddenAddress(ip)).toBe(true);
    expect(forbiddenAddressReason(ip)).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.255',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '[2606:4700:4700::1111]',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2001:200::1',
    '2001:db9::1',
  ])('allows the public address %s', (ip) => {
    expect(forbiddenAddressReason(ip)).toBeNull();
  });
});

describe('address parsing', () => {
  it('parses IPv4 to a 32-bit number and refuses other spellings', () => {
    expect(parseIPv4('127.0.0.1')).toBe(0x7f000001);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
    for (const bad of ['127.1', '0x7f.0.0.1', '256.0.0.1', '1.2.3', '::1']) expect(parseIPv4(bad)).toBeNull();
  });

  it('parses IPv6 to eight groups, with :: and an IPv4 tail', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(parseIPv6('2001:DB8:0:0:1:2:3:4')).toEqual([0x2001, 0xdb8, 0, 0, 1, 2, 3, 4]);
    expect(parseIPv6('fe80::1%lo0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    for (const bad of ['1:2:3', ':::', '1.2.3.4', 'g::1']) expect(parseIPv6(bad)).toBeNull();
  });
});
