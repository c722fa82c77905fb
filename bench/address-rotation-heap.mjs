// The heap the per-address counters take when 1,000,000 distinct client addresses each fail once:
//   npm run build && node --expose-gc bench/address-rotation-heap.mjs [path/to/memory-rate-limit-storage.js [--per-address]]
// (another build's storage, counting every address on its own as builds before the /64 grouping did, for comparison).
// Prints the heap used before and after, after a full GC each time, for forged IPv4 addresses (each distinct)
// and for IPv6 addresses rotated inside one /64.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const ADDRESSES = 1_000_000;
const MINUTE = 60_000;
const storagePath = resolve(process.argv[2] ?? 'dist/auth/rate-limit/memory-rate-limit-storage.js');
const { MemoryRateLimitStorage } = await import(pathToFileURL(storagePath).href);
const { clientAddressKey } =
  process.argv[3] === '--per-address'
    ? { clientAddressKey: (ip) => ip }
    : await import(pathToFileURL(resolve('dist/auth/rate-limit/client-address.js')).href);

const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
function heapUsed() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

const cases = {
  'IPv4, each distinct': (n) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
  'IPv6, rotated inside one /64': (n) => `2001:db8:0:1:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`,
};
for (const [name, address] of Object.entries(cases)) {
  const before = heapUsed();
  let storage = new MemoryRateLimitStorage();
  for (let n = 0; n < ADDRESSES; n += 1) {
    await storage.increment(clientAddressKey(address(n)), MINUTE, 30, MINUTE, 'auth-failure');
  }
  const after = heapUsed();
  console.log(
    `${name}: ${ADDRESSES.toLocaleString('en')} addresses -> ${storage.size.toLocaleString('en')} counter(s), ` +
      `heap ${mib(before)} MiB before, ${mib(after)} MiB after (+${mib(after - before)} MiB)`,
  );
  storage = undefined;
}
