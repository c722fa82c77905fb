import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { cpuMicros } from './server-process.js';

export interface Route {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** A fresh path per request (random ids). */
  randomPath?: () => string;
  /** The status every answer must have. */
  status: 200 | 201;
  /** Target: the service's CPU per request at most this many times the straightforward app's (docs/performance.md). */
  maxCpuRatio: number;
}

export const NEW_PET = { name: 'Bench', categoryId: 7, status: 'pending' } as const;

export function benchRoutes(seeded: number): Route[] {
  return [
    { name: 'list limit=20', method: 'GET', path: '/v1/pets?limit=20', status: 200, maxCpuRatio: 0.8 },
    {
      name: 'list limit=100&status=available',
      method: 'GET',
      path: '/v1/pets?limit=100&status=available',
      status: 200,
      maxCpuRatio: 0.8,
    },
    {
      name: 'get by id',
      method: 'GET',
      path: '/v1/pets/1',
      randomPath: () => `/v1/pets/${1 + Math.floor(Math.random() * seeded)}`,
      status: 200,
      maxCpuRatio: 1.0,
    },
    { name: 'create', method: 'POST', path: '/v1/pets', body: JSON.stringify(NEW_PET), status: 201, maxCpuRatio: 0.8 },
  ];
}

export interface LoadResult {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  cpuMicrosPerRequest: number;
  /** Each PostgreSQL cluster's CPU per request (its postmaster and every backend), by its name in `postmasters`. */
  databaseCpuMicrosPerRequest: Record<string, number>;
  errors: number;
  non2xx: number;
}

/** The headers of every request on `route`. */
export function requestHeaders(route: Route, key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...(route.body && { 'content-type': 'application/json' }) };
}

/** One autocannon run against a server process, with its CPU time and that of each cluster in `postmasters`. */
export async function load(
  origin: string,
  pid: number,
  route: Route,
  options: { connections: number; seconds: number; key: string; postmasters?: Record<string, number> },
): Promise<LoadResult> {
  const headers = requestHeaders(route, options.key);
  const postmasters = Object.entries(options.postmasters ?? {});
  const sample = () => [pid, ...postmasters.map(([, postmaster]) => postmaster)].map(cpuMicros);
  const before = sample();
  const result = await autocannon({
    url: origin,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: route.method,
        path: route.path,
        headers,
        body: route.body,
        // autocannon calls setupRequest whenever the key exists, even when undefined.
        ...(route.randomPath && { setupRequest: (req) => ({ ...req, path: route.randomPath!() }) }),
      },
    ],
  });
  const requests = result.requests.total;
  const [cpu, ...databases] = sample().map((after, i) => (requests > 0 ? (after - before[i]) / requests : NaN));
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    cpuMicrosPerRequest: cpu,
    databaseCpuMicrosPerRequest: Object.fromEntries(postmasters.map(([name], i) => [name, databases[i]])),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Median latency in ms of `count` sequential requests on one kept-alive connection. */
export async function sequentialLatency(url: string, key: string, count: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      request(url, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`));
          else resolve(Number(process.hrtime.bigint() - started) / 1e6);
        });
      })
        .on('error', reject)
        .end();
    });
  for (let i = 0; i < Math.min(50, count); i++) await once();
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await once());
  agent.destroy();
  return median(times);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
