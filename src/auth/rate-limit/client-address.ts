const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The 16-bit groups an IPv6 fragment (one side of `::`) spells; a dotted IPv4 tail counts as two. */
function groupsOf(part: string): string[] {
  if (part === '') return [];
  const groups = part.split(':');
  if (groups[groups.length - 1].includes('.')) groups.splice(-1, 1, '0', '0');
  return groups;
}

/** What the address budget counts: an IPv4 address (mapped ones too), or an IPv6 address's /64 network. */
export function clientAddressKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const mapped = IPV4_MAPPED.exec(ip);
  if (mapped) return mapped[1];
  const [head, tail] = ip.split('%', 1)[0].toLowerCase().split('::', 2);
  const leading = groupsOf(head);
  const trailing = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array<string>(Math.max(0, 8 - leading.length - trailing.length)).fill('0');
  const network = [...leading, ...zeros, ...trailing].slice(0, 4).map((group) => group.replace(/^0+(?=.)/, ''));
  return `${network.join(':')}::/64`;
}
