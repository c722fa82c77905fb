import { LoadResult, median } from './load.js';

/** The service, the bare Fastify + pg ceiling, and (with `--floor`) the Nest parts the service must use. */
export type ServerName = 'service' | 'ceiling' | 'floor';

export interface RouteSummary {
  route: string;
  server: ServerName;
  rounds: number;
  medianReqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuMicrosPerRequest: number;
  peakRssMiB: number;
  errors: number;
  non2xx: number;
}

export interface RouteRatio {
  route: string;
  reqPerSec: number;
  cpuPerRequest: number;
  p99: number;
}

/** Medians over the rounds (throughput, latency, CPU per request); sums of failures. */
export function summarise(route: string, server: ServerName, runs: LoadResult[], peakRssMiB: number): RouteSummary {
  return {
    route,
    server,
    rounds: runs.length,
    medianReqPerSec: median(runs.map((run) => run.reqPerSec)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    cpuMicrosPerRequest: median(runs.map((run) => run.cpuMicrosPerRequest)),
    peakRssMiB,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
  };
}

/** Per route, `server`'s figures over the ceiling's. */
export function ratios(summaries: RouteSummary[], server: Exclude<ServerName, 'ceiling'>): RouteRatio[] {
  const routes = [...new Set(summaries.map((s) => s.route))];
  return routes.map((route) => {
    const measured = summaries.find((s) => s.route === route && s.server === server)!;
    const ceiling = summaries.find((s) => s.route === route && s.server === 'ceiling')!;
    return {
      route,
      reqPerSec: measured.medianReqPerSec / ceiling.medianReqPerSec,
      cpuPerRequest: measured.cpuMicrosPerRequest / ceiling.cpuMicrosPerRequest,
      p99: measured.p99Ms / ceiling.p99Ms,
    };
  });
}

/** The performance targets (README, "Performance"): throughput at least 0.80 of the ceiling's, CPU per request at most 1.25x, p99 at most 1.5x. */
export const meetsTargets = (r: RouteRatio) => r.reqPerSec >= 0.8 && r.cpuPerRequest <= 1.25 && r.p99 <= 1.5;

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

function markdownTable(header: string[], rows: string[][]): string {
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The results as Markdown tables, ready to paste into the README. */
export function formatTables(summaries: RouteSummary[], routeRatios: RouteRatio[], floorRatios?: RouteRatio[]): string {
  const results = markdownTable(
    ['route', 'server', 'req/s (median)', 'p50 ms', 'p99 ms', 'CPU µs/req', 'peak RSS MiB', 'errors', 'non-2xx'],
    summaries.map((s) => [
      s.route,
      s.server,
      fixed(s.medianReqPerSec),
      fixed(s.p50Ms, 1),
      fixed(s.p99Ms, 1),
      fixed(s.cpuMicrosPerRequest),
      fixed(s.peakRssMiB),
      String(s.errors),
      String(s.non2xx),
    ]),
  );
  const ratioTable = (server: string, rows: RouteRatio[]) =>
    markdownTable(
      ['route', `req/s ${server}/ceiling`, `CPU/req ${server}/ceiling`, `p99 ${server}/ceiling`, 'targets met'],
      rows.map((r) => [
        r.route,
        fixed(r.reqPerSec, 2),
        `${fixed(r.cpuPerRequest, 2)}x`,
        `${fixed(r.p99, 2)}x`,
        meetsTargets(r) ? 'yes' : 'no',
      ]),
    );
  const tables = [results, ratioTable('service', routeRatios)];
  if (floorRatios) tables.push(ratioTable('floor', floorRatios));
  return tables.join('\n\n');
}
