import { LoadResult, median, Route } from './load.js';

/**
 * The service and the yardsticks: the same app with the same production features written the usual way
 * (feature-equal), the straightforward NestJS + TypeORM app, the bare Fastify + pg ceiling, (with `--floor`) the Nest
 * parts the service must use, (with `--lean`) the service with its optional features off, and (with `--baseline`)
 * another build of the service.
 */
export type ServerName =
  'service' | 'feature-equal' | 'straightforward' | 'ceiling' | 'floor' | 'lean' | 'baseline' | 'traced' | 'replicated';

/** A figure over the rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface RouteSummary {
  route: string;
  server: ServerName;
  rounds: number;
  medianReqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU µs per request of the server process (`server`), of each PostgreSQL cluster, and their `sum`. */
  cpu: Record<string, Spread>;
  peakRssMiB: number;
  errors: number;
  non2xx: number;
}

export interface RouteRatio {
  route: string;
  reqPerSec: number;
  /** The server process's CPU per request. */
  cpuPerRequest: number;
  /** PostgreSQL's (every cluster's) and the sum's, when the run measured PostgreSQL. */
  databaseCpu?: number;
  sumCpu?: number;
  p99: number;
}

const spread = (values: number[]): Spread => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
});

/** Medians over the rounds (throughput, latency; CPU per request with its spread); sums of failures. */
export function summarise(route: string, server: ServerName, runs: LoadResult[], peakRssMiB: number): RouteSummary {
  const rounds = runs.map((run): Record<string, number> => {
    const processes = { server: run.cpuMicrosPerRequest, ...run.databaseCpuMicrosPerRequest };
    const values = Object.values(processes);
    return values.length > 1 ? { ...processes, sum: values.reduce((sum, value) => sum + value) } : processes;
  });
  return {
    route,
    server,
    rounds: runs.length,
    medianReqPerSec: median(runs.map((run) => run.reqPerSec)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    cpu: Object.fromEntries(Object.keys(rounds[0]).map((name) => [name, spread(rounds.map((round) => round[name]))])),
    peakRssMiB,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
  };
}

/** Per route, `server`'s figures over `against`'s. */
export function ratios(summaries: RouteSummary[], server: ServerName, against: ServerName): RouteRatio[] {
  const routes = [...new Set(summaries.map((s) => s.route))];
  return routes.map((route) => {
    const measured = summaries.find((s) => s.route === route && s.server === server)!;
    const base = summaries.find((s) => s.route === route && s.server === against)!;
    return {
      route,
      reqPerSec: measured.medianReqPerSec / base.medianReqPerSec,
      cpuPerRequest: measured.cpu.server.median / base.cpu.server.median,
      ...(measured.cpu.sum && {
        databaseCpu: databaseMedian(measured) / databaseMedian(base),
        sumCpu: measured.cpu.sum.median / base.cpu.sum.median,
      }),
      p99: measured.p99Ms / base.p99Ms,
    };
  });
}

/** PostgreSQL's CPU per request: the medians of every cluster measured (one, or a primary and its replica). */
function databaseMedian(summary: RouteSummary): number {
  const clusters = Object.keys(summary.cpu).filter((name) => name !== 'server' && name !== 'sum');
  return clusters.reduce((total, name) => total + summary.cpu[name].median, 0);
}

/** The service's limits other than the per-route CPU ratios of bench/load.ts (docs/performance.md, "Targets"). */
export const LIMITS = {
  peakRssMiB: 200,
  listScaleRatio: 1.3,
  startupWarmMs: 1500,
  /** Throughput over the feature-equal app's, at least. */
  reqPerSecOverFeatureEqual: 1.5,
  /** CPU per request over the ceiling's, at most. */
  cpuOverCeiling: 1.6,
  /** Over the floor's (with `--floor`), on every route: CPU per request of the server, of PostgreSQL and their sum at
   * most, throughput at least, p99 at most; and the peak RSS at most the straightforward app's. */
  overFloor: { serverCpu: 1.3, databaseCpu: 1.0, sumCpu: 1.15, reqPerSec: 0.9, p99: 1.2 },
};

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/**
 * The targets, one row each: against the feature-equal app on every route, LIMITS.reqPerSecOverFeatureEqual the
 * requests a second for less CPU per request; against the straightforward app on every route, CPU per request at
 * most the route's `maxCpuRatio`, throughput at least 1.0x and p99 no worse; against the ceiling, CPU per request at
 * most LIMITS.cpuOverCeiling; then the service's peak RSS (and, with a baseline, no more than the baseline's), the
 * list cost from 10,000 to 1,000,000 rows and the start-up against a running PostgreSQL; with the floor, LIMITS.overFloor.
 * A figure that is not a number fails.
 */
export function targets(
  routes: Route[],
  against: { featureEqual: RouteRatio[]; straightforward: RouteRatio[]; ceiling: RouteRatio[]; floor?: RouteRatio[] },
  measured: {
    peakRssMiB: number;
    baselinePeakRssMiB?: number;
    straightforwardPeakRssMiB: number;
    listScaleRatio: number;
    startupWarmMs: number;
  },
): Target[] {
  const row = (route: Route, yardstick: string, target: string, value: number, met: boolean): Target => ({
    target: `${route.name}, against the ${yardstick} app: ${target}`,
    measured: `${fixed(value, 2)}x`,
    met,
  });
  const find = (rows: RouteRatio[], route: Route) => rows.find((ratio) => ratio.route === route.name)!;
  return [
    ...routes.flatMap((route) => {
      const r = find(against.featureEqual, route);
      return [
        row(
          route,
          'feature-equal',
          `req/s ≥ ${LIMITS.reqPerSecOverFeatureEqual.toFixed(2)}x`,
          r.reqPerSec,
          r.reqPerSec >= LIMITS.reqPerSecOverFeatureEqual,
        ),
        row(route, 'feature-equal', 'CPU/req ≤ 1.00x', r.cpuPerRequest, r.cpuPerRequest <= 1),
      ];
    }),
    ...routes.flatMap((route) => {
      const r = find(against.straightforward, route);
      const maxCpu = route.maxCpuRatio;
      return [
        row(route, 'straightforward', `CPU/req ≤ ${maxCpu.toFixed(2)}x`, r.cpuPerRequest, r.cpuPerRequest <= maxCpu),
        row(route, 'straightforward', 'req/s ≥ 1.00x', r.reqPerSec, r.reqPerSec >= 1),
        row(route, 'straightforward', 'p99 ≤ 1.00x', r.p99, r.p99 <= 1),
      ];
    }),
    ...routes.map((route) => {
      const r = find(against.ceiling, route);
      return {
        target: `${route.name}, against the ceiling: CPU/req ≤ ${LIMITS.cpuOverCeiling.toFixed(2)}x`,
        measured: `${fixed(r.cpuPerRequest, 2)}x`,
        met: r.cpuPerRequest <= LIMITS.cpuOverCeiling,
      };
    }),
    ...(against.floor ? floorTargets(routes, against.floor, measured) : []),
    {
      target: `service peak RSS < ${LIMITS.peakRssMiB} MiB`,
      measured: `${fixed(measured.peakRssMiB)} MiB`,
      met: measured.peakRssMiB < LIMITS.peakRssMiB,
    },
    ...(measured.baselinePeakRssMiB === undefined
      ? []
      : [
          {
            target: 'service peak RSS ≤ the baseline’s',
            measured: `${fixed(measured.peakRssMiB)} / ${fixed(measured.baselinePeakRssMiB)} MiB`,
            met: measured.peakRssMiB <= measured.baselinePeakRssMiB,
          },
        ]),
    {
      target: `list latency 1,000,000 / 10,000 rows < ${LIMITS.listScaleRatio}`,
      measured: fixed(measured.listScaleRatio, 2),
      met: measured.listScaleRatio < LIMITS.listScaleRatio,
    },
    {
      target: `start-up, PostgreSQL running < ${LIMITS.startupWarmMs} ms`,
      measured: `${fixed(measured.startupWarmMs)} ms`,
      met: measured.startupWarmMs < LIMITS.startupWarmMs,
    },
  ];
}

/** The whole request against the floor, per route (LIMITS.overFloor), and the peak RSS against the featureless app's. */
function floorTargets(
  routes: Route[],
  floor: RouteRatio[],
  measured: { peakRssMiB: number; straightforwardPeakRssMiB: number },
): Target[] {
  const limits = LIMITS.overFloor;
  const rows = routes.flatMap((route) => {
    const r = floor.find((ratio) => ratio.route === route.name)!;
    const row = (target: string, value: number | undefined, limit: number, atLeast = false): Target => ({
      target: `${route.name}, against the floor: ${target} ${atLeast ? '≥' : '≤'} ${limit.toFixed(2)}x`,
      measured: `${fixed(value ?? NaN, 2)}x`,
      met: value !== undefined && (atLeast ? value >= limit : value <= limit),
    });
    return [
      row('CPU/req, server + PostgreSQL', r.sumCpu, limits.sumCpu),
      row('CPU/req, PostgreSQL', r.databaseCpu, limits.databaseCpu),
      row('CPU/req, server', r.cpuPerRequest, limits.serverCpu),
      row('req/s', r.reqPerSec, limits.reqPerSec, true),
      row('p99', r.p99, limits.p99),
    ];
  });
  return [
    ...rows,
    {
      target: 'service peak RSS ≤ the straightforward app’s',
      measured: `${fixed(measured.peakRssMiB)} / ${fixed(measured.straightforwardPeakRssMiB)} MiB`,
      met: measured.peakRssMiB <= measured.straightforwardPeakRssMiB,
    },
  ];
}

function markdownTable(header: string[], rows: string[][]): string {
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** `server`'s figures over `against`'s, per route. */
export function ratioTable(server: ServerName, against: ServerName, rows: RouteRatio[]): string {
  const ratio = `${server}/${against}`;
  const database = rows.some((r) => r.sumCpu !== undefined);
  const cpu = database ? [`CPU/req server ${ratio}`, `PostgreSQL ${ratio}`, `sum ${ratio}`] : [`CPU/req ${ratio}`];
  return markdownTable(
    ['route', ...cpu, `req/s ${ratio}`, `p99 ${ratio}`],
    rows.map((r) => [
      r.route,
      ...[r.cpuPerRequest, ...(database ? [r.databaseCpu, r.sumCpu] : [])].map((value) => `${fixed(value ?? NaN, 2)}x`),
      `${fixed(r.reqPerSec, 2)}x`,
      `${fixed(r.p99, 2)}x`,
    ]),
  );
}

/** `server`'s peak RSS over `against`'s, with both. */
export function rssRatio(server: ServerName, against: ServerName, peakRssMiB: Map<ServerName, number>): string {
  const [measured, base] = [peakRssMiB.get(server)!, peakRssMiB.get(against)!];
  return `peak RSS ${server}/${against}: ${fixed(measured / base, 2)}x (${fixed(measured)} MiB / ${fixed(base)} MiB)`;
}

export function targetTable(rows: Target[]): string {
  const met = rows.filter((row) => row.met).length;
  const table = markdownTable(
    ['target (the service; ratios to a yardstick)', 'measured', 'result'],
    rows.map((row) => [row.target, row.measured, row.met ? 'pass' : 'FAIL']),
  );
  return `${table}\n\n${met} of ${rows.length} targets met.`;
}

/** Every server's medians per route; CPU per request of each process and their sum, with the rounds' spread. */
export function resultsTable(summaries: RouteSummary[]): string {
  const processes = Object.keys(summaries[0].cpu);
  return markdownTable(
    [
      'route',
      'server',
      'req/s (median)',
      'p50 ms',
      'p99 ms',
      ...processes.map((name) => `CPU µs/req: ${name} (min–max)`),
      'peak RSS MiB',
      'errors',
      'non-2xx',
    ],
    summaries.map((s) => [
      s.route,
      s.server,
      fixed(s.medianReqPerSec),
      fixed(s.p50Ms, 1),
      fixed(s.p99Ms, 1),
      ...processes.map((name) => `${fixed(s.cpu[name].median)} (${fixed(s.cpu[name].min)}–${fixed(s.cpu[name].max)})`),
      fixed(s.peakRssMiB),
      String(s.errors),
      String(s.non2xx),
    ]),
  );
}
