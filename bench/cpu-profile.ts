/**
 * Where a `--cpu-prof` profile's busy time goes, per package or folder of the service: self time (samples whose
 * innermost frame is there), owned time (self time plus that of the Node core code it called: what it asked Node to
 * do) and total time (samples with the place anywhere on the stack, counted once).
 * Built-ins without a script (`writev`, `JSON.stringify`...) are charged, as self time, to the nearest caller that
 * has one: the work is that caller's. Idle samples are left out of the busy time; the garbage collector and
 * `(program)` (V8 and native code outside any JavaScript frame) are places of their own.
 *
 * `node bench/dist/cpu-profile.js <file.cpuprofile>... [--top N]` (only the measured seconds, and µs per request, when
 * bench/profile.ts left a `<name>.window.json` beside the profile), or through bench/profile.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** The `.cpuprofile` format V8 writes (Chrome DevTools Protocol `Profiler.Profile`). */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Place {
  place: string;
  /** Shares of the busy time, 0 to 1: its own code's. */
  self: number;
  /** Its own code's and that of the Node core it called (socket writes, streams, events...). */
  owned: number;
  /** With it anywhere on the stack. */
  total: number;
}

export interface ProfileSummary {
  /** Busy time (every sample but idle), in ms. */
  busyMs: number;
  /** Per package or folder, by owned time, largest first. */
  places: Place[];
  /** Per function (`name place:line`), by self time, largest first (owned and total unset). */
  functions: Place[];
}

const VIRTUAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);

/**
 * The place of a script: an npm package (the innermost `node_modules/…`), a folder of the built service
 * (`service/pets`), a yardstick's script (`bench/nest-floor.js`), a Node core module (`node:net`,
 * `node:internal/streams`), or the script itself.
 */
export function placeOf(url: string): string {
  const packageAt = url.lastIndexOf('/node_modules/');
  if (packageAt !== -1) {
    const [scope, name] = url.slice(packageAt + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  const benchAt = url.lastIndexOf('/bench/dist/');
  if (benchAt !== -1) return `bench/${url.slice(benchAt + '/bench/dist/'.length)}`;
  const serviceAt = url.lastIndexOf('/dist/src/');
  if (serviceAt !== -1) {
    const path = url.slice(serviceAt + '/dist/src/'.length).split('/');
    return `service/${path.length > 1 ? path.slice(0, -1).join('/') : path[0]}`;
  }
  if (url.startsWith('node:')) {
    const path = url.slice('node:'.length).split('/');
    return `node:${path[0] === 'internal' && path.length > 1 ? `internal/${path[1]}` : path[0]}`;
  }
  return url;
}

/**
 * Summarises the samples taken within `window` (µs on the profile's clock, the monotonic clock of
 * `process.hrtime`), or all of them.
 */
export function summariseProfile(profile: CpuProfile, window?: { from: number; to: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  // The place each node's time is charged to.
  const charged = new Map<number, string>();
  const placeFor = (id: number): string => {
    const known = charged.get(id);
    if (known !== undefined) return known;
    const { functionName, url } = byId.get(id)!.callFrame;
    const caller = parent.get(id);
    let place: string;
    if (url !== '') place = placeOf(url);
    else if (VIRTUAL.has(functionName)) place = functionName;
    else if (caller === undefined || placeFor(caller) === '(root)') place = `native ${functionName}`;
    else place = placeFor(caller);
    charged.set(id, place);
    return place;
  };
  // The place that asked Node core for the work of each node: the nearest caller outside Node core.
  const owners = new Map<number, string>();
  const ownerFor = (id: number): string => {
    const known = owners.get(id);
    if (known !== undefined) return known;
    const place = placeFor(id);
    const caller = parent.get(id);
    const inNode = place.startsWith('node:') || place.startsWith('native ');
    const owner = inNode && caller !== undefined && placeFor(caller) !== '(root)' ? ownerFor(caller) : place;
    owners.set(id, owner);
    return owner;
  };

  const self = new Map<string, number>();
  const owned = new Map<string, number>();
  const total = new Map<string, number>();
  const functions = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, value: number) => map.set(key, (map.get(key) ?? 0) + value);
  let busy = 0;
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i];
    // A sample stands for the time until the next one.
    const weight = profile.timeDeltas[i + 1] ?? 0;
    if (window && (time < window.from || time > window.to)) continue;
    const id = profile.samples[i];
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    busy += weight;
    const place = placeFor(id);
    add(self, place, weight);
    add(owned, ownerFor(id), weight);
    const where = frame.url === '' ? place : `${placeOf(frame.url)}:${frame.lineNumber + 1}`;
    add(functions, `${frame.functionName || '(anonymous)'} ${where}`, weight);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) onStack.add(placeFor(at));
    for (const seen of onStack) add(total, seen, weight);
  }
  const share = (map: Map<string, number>, key: string) => (map.get(key) ?? 0) / busy;
  const places = [...total.keys()]
    .map((place) => ({ place, self: share(self, place), owned: share(owned, place), total: share(total, place) }))
    .sort((a, b) => b.owned - a.owned || b.total - a.total);
  const byFunction = [...functions.keys()]
    .map((place) => ({ place, self: share(functions, place), owned: NaN, total: NaN }))
    .sort((a, b) => b.self - a.self);
  return { busyMs: busy / 1000, places, functions: byFunction };
}

/**
 * The service's features and the stack under them, each with the places whose owned time is its own: the libraries
 * it runs through and the service's folders. Places in no group (Node core called from the event loop itself, the
 * profiler's `(program)`) are left out; a place belongs to one group only.
 */
export const FEATURES: readonly (readonly [feature: string, places: readonly string[]])[] = [
  [
    'database: pg and TypeORM (the query on the socket, rows parsed)',
    ['pg', 'pg-protocol', 'pg-pool', 'pg-types', 'typeorm', 'service/database'],
  ],
  [
    'HTTP: Fastify (routing, hooks, the response and its write)',
    [
      'fastify',
      'find-my-way',
      'fast-json-stringify',
      'toad-cache',
      '@fastify/middie',
      'node:_http_common',
      'node:_http_incoming',
      'node:_http_outgoing',
      'node:_http_server',
    ],
  ],
  [
    'NestJS router (guards, pipes, handler, reflect-metadata)',
    ['@nestjs/core', '@nestjs/common', '@nestjs/platform-fastify', 'reflect-metadata'],
  ],
  [
    'interceptor chain (rxjs) and the deprecation interceptor',
    ['rxjs', 'service/deprecation', 'node:async_hooks', 'node:internal/async_hooks'],
  ],
  [
    'API key guard (passport, key store)',
    [
      '@nestjs/passport',
      'passport',
      'passport-http-bearer',
      'service/auth',
      'service/auth/api-keys',
      'node:internal/crypto',
    ],
  ],
  ['rate limit (@nestjs/throttler, counters)', ['@nestjs/throttler', 'service/auth/rate-limit']],
  ['request log (pino)', ['pino', 'sonic-boom', 'quick-format-unescaped', 'service/observability/logging']],
  ['metrics (prom-client)', ['prom-client', 'service/observability/metrics']],
  [
    'edge (security headers, request id, header check, load shedding)',
    ['service/edge', 'service/app.setup.js', '@fastify/under-pressure'],
  ],
  ['validation (class-validator, class-transformer)', ['class-validator', 'class-transformer']],
  [
    'handlers: service/pets or the floor (rows to answers, cursors)',
    ['service/pets', 'lru-cache', 'bench/nest-floor.js', 'bench/nest-yardstick.js', 'bench/yardstick-pets.js'],
  ],
  ['garbage collector', ['(garbage collector)']],
];

/** The owned share of each feature of FEATURES. */
export function featureShares(summary: ProfileSummary): { feature: string; owned: number }[] {
  const owned = new Map(summary.places.map((p) => [p.place, p.owned]));
  return FEATURES.map(([feature, places]) => ({
    feature,
    owned: places.reduce((sum, place) => sum + (owned.get(place) ?? 0), 0),
  }));
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/**
 * The summary as Markdown: the features, the `top` places, then the `top` functions. Given the `requests` served in
 * the summarised window, each share also as µs of the main thread per request (busy time × share ÷ requests), the
 * figure to compare between two servers: shares hide a cost that both pay but one pays more of.
 */
export function profileTables(summary: ProfileSummary, top = 25, requests?: number): string {
  const perRequest = (share: number) =>
    requests === undefined ? '' : ` ${((summary.busyMs * 1000 * share) / requests).toFixed(1)} |`;
  const column = requests === undefined ? '' : ' µs/req |';
  const rule = requests === undefined ? '' : ' --- |';
  const features = featureShares(summary)
    .map((f) => `| ${f.feature} | ${percent(f.owned)} |${perRequest(f.owned)}`)
    .join('\n');
  const places = summary.places
    .slice(0, top)
    .map((p) => `| ${p.place} | ${percent(p.owned)} |${perRequest(p.owned)} ${percent(p.self)} | ${percent(p.total)} |`)
    .join('\n');
  const functions = summary.functions
    .slice(0, top)
    .map((f) => `| \`${f.place}\` | ${percent(f.self)} |${perRequest(f.self)}`)
    .join('\n');
  const busy =
    `busy ${summary.busyMs.toFixed(0)} ms` +
    (requests === undefined ? '' : `, ${requests} requests, ${perRequest(1).slice(1, -2)} µs/req`);
  return (
    `${busy}\n\n| feature | owned |${column}\n| --- | --- |${rule}\n${features}\n\n` +
    `| place | owned |${column} self | total |\n| --- | --- |${rule} --- | --- |\n${places}\n\n` +
    `| function | self |${column}\n| --- | --- |${rule}\n${functions}`
  );
}

/** The measured window bench/profile.ts leaves beside a profile: µs on the profile's clock, and the requests served. */
export interface ProfileWindow {
  from: number;
  to: number;
  requests?: number;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const topAt = process.argv.indexOf('--top');
  const top = topAt === -1 ? 25 : Number(process.argv[topAt + 1]);
  const files = process.argv.slice(2).filter((arg, i, args) => arg !== '--top' && args[i - 1] !== '--top');
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const windowFile = file.replace(/\.cpuprofile$/, '.window.json');
    const window = existsSync(windowFile) ? (JSON.parse(readFileSync(windowFile, 'utf8')) as ProfileWindow) : undefined;
    console.log(`## ${file}\n\n${profileTables(summariseProfile(profile, window), top, window?.requests)}\n`);
  }
}
