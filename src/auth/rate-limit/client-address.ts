import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

const IPV4_MAPPED = ipaddr.IPv6.parseCIDR('::ffff:0:0/96');

/**
 * What the address budget counts: an IPv4 address (mapped ones too), or an IPv6 address's /64 network. The mapped
 * range is matched alone: ipaddr.js's `range()` tries every special range in turn.
 */
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
