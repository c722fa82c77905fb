import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { IntervalThrottle } from '../common/interval-throttle.js';
import type { DatabaseFault } from './database-faults.js';

/** A kind of fault (its SQLSTATE) is logged at most once per this interval, however many requests it fails. */
export const DATABASE_FAULT_LOG_INTERVAL_MS = 10_000;

/** Counts requests failed by database faults, by SQLSTATE class; the metrics module provides it under this token. */
export abstract class DatabaseFaultCounter {
  abstract recordDatabaseFault(sqlClass: string): void;
}

interface Series {
  /** The latest fault of this kind, whose message the next line gives. */
  last: DatabaseFault;
  /** Requests it failed since its last line. */
  failed: number;
}

/** Kinds followed at once: SQLSTATEs number a few hundred, so it is never reached. */
const DATABASE_FAULT_KINDS_MAX = 1_000;

/**
 * The log of the database's faults: one warn line when a kind of fault (a SQLSTATE) first fails a request,
 * then at most one per DATABASE_FAULT_LOG_INTERVAL_MS while it goes on, each with the SQLSTATE,
 * PostgreSQL's own message and how many requests it failed since the previous line; no stack, which would
 * say nothing the SQLSTATE does not. A fault that fails 1,000 requests a second writes one line per 10 s,
 * not 10,000 stacks, and a quiet interval ends the series. Every failed request is counted in the metric.
 */
@Injectable()
export class DatabaseFaultLog implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseFaults');
  private readonly series = new IntervalThrottle<string, Series>({
    intervalMs: DATABASE_FAULT_LOG_INTERVAL_MS,
    maxKeys: DATABASE_FAULT_KINDS_MAX,
    onIntervalEnd: (_code, series) => this.endOfInterval(series),
  });

  constructor(private readonly counter: DatabaseFaultCounter) {}

  record(fault: DatabaseFault): void {
    this.counter.recordDatabaseFault(fault.sqlClass);
    const series = this.series.get(fault.code);
    if (series) {
      series.last = fault;
      series.failed += 1;
      return;
    }
    this.series.admit(fault.code, { last: fault, failed: 0 });
    this.write(fault, 1);
  }

  /** The requests failed since each kind's last line are written before the process goes. */
  onApplicationShutdown(): void {
    this.series.endAll();
  }

  /** At the end of an interval: a line for the requests failed during it, and another interval; or the series ends. */
  private endOfInterval(series: Series): Series | undefined {
    if (series.failed === 0) return undefined;
    this.write(series.last, series.failed);
    return { last: series.last, failed: 0 };
  }

  private write(fault: DatabaseFault, failedRequests: number): void {
    this.logger.warn(
      {
        sqlstate: fault.code,
        sqlClass: fault.sqlClass,
        postgresMessage: fault.message,
        failedRequests,
      },
      `Database fault ${fault.code} (${fault.kind}): "${fault.message}"; ${failedRequests} request(s) answered 503 since the last line of this kind`,
    );
  }
}
