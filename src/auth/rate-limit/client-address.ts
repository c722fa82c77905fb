import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

const IPV4_MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');

/** An IPv4 address (mapped ones too) or an IPv6 /64; only the mapped range is matched, as `range()` tries them all. */
export function clientAddressKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  if (ipaddr.IPv6.isValid(ip)) {
    const address = ipaddr.IPv6.parse(ip);
    if (address.match(IPV4_MAPPED)) return address.toIPv4Address().toString();
    const network = address.parts.slice(0, 4).map((group) => group.toString(16));
    return `${network.join(':')}::/64`;
  }
  return ipaddr.IPv4.isValid(ip) ? ipaddr.IPv4.parse(ip).toString() : ip;
}
