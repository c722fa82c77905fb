import ipaddr from 'ipaddr.js';

/** What the address budget counts: an IPv4 address (mapped ones too), or an IPv6 address's /64 network. */
export function clientAddressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = (address as ipaddr.IPv6).parts.slice(0, 4).map((group) => group.toString(16));
  return `${network.join(':')}::/64`;
}
