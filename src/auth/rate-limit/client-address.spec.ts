import { clientAddressKey } from './client-address.js';

describe('clientAddressKey', () => {
  it('counts an IPv4 address as itself, mapped or not', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it.each([
    ['2001:db8:0:1:aaaa:bbbb:cccc:dddd', '2001:db8:0:1::/64'],
    ['2001:db8:0:1::1', '2001:db8:0:1::/64'],
    ['2001:0DB8:0000:0001:0000:0000:0000:0001', '2001:db8:0:1::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['::1:2:3:4:5:6:7', '0:1:2:3::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('counts %s in its /64: %s', (address, network) => {
    expect(clientAddressKey(address)).toBe(network);
  });

  it('gives every address of one /64 the same key and neighbouring /64s different ones', () => {
    const keys = new Set(
      ['2001:db8:0:1::1', '2001:db8:0:1:ffff::2', '2001:db8:0:1:1234:5678:9abc:def0'].map(clientAddressKey),
    );
    expect(keys.size).toBe(1);
    expect(clientAddressKey('2001:db8:0:2::1')).not.toBe(clientAddressKey('2001:db8:0:1::1'));
  });
});
