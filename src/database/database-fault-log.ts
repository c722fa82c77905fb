import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { IntervalThrottle } from '../common/interval-throttle.js';
import type { DatabaseFault } from './database-faults.js';

/** A kind of fault (its SQLSTATE) is logged at most once per this interval, however many requests it fails. */
export const DATABASE_FAULT_LOG_INTERVAL_MS = 10_000;

/** Counts requests failed by database faults, by SQLSTATE class; the metrics module provides it under this token. */
export abstract class DatabaseFaultCounter {
  abstract recordDatabaseFault(sqlClass: string): void;
}

/** The latest fault of a kind, and the requests it failed since its last line. */
type Series = { last: DatabaseFault; failed: number };

/**
 * One warn line when a kind of fault first fails a request, then at most one per interval while it goes on, with its
 * message and the requests it failed since (no stack); a quiet interval ends the series. Each failure is counted.
 */
@Injectable()
export class DatabaseFaultLog implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseFaults');
  private readonly series = new IntervalThrottle<string, Series>({
    intervalMs: DATABASE_FAULT_LOG_INTERVAL_MS,
    maxKeys: 1_000, // SQLSTATEs number a few hundred.
    onIntervalEnd: (_code, { last, failed }) => {
      if (failed === 0) return undefined;
      this.write(last, failed);
      return { last, failed: 0 };
    },
  });

  constructor(private readonly counter: DatabaseFaultCounter) {}

  record(fault: DatabaseFault): void {
    this.counter.recordDatabaseFault(fault.sqlClass);
    const series = this.series.get(fault.code);
    if (series) {
      series.last = fault;
      series.failed += 1;
    } else if (this.series.admit(fault.code, { last: fault, failed: 0 })) {
      this.write(fault, 1);
    }
  }

  /** The requests failed since each kind's last line are written before the process goes. */
  onApplicationShutdown(): void {
    this.series.endAll();
  }

  private write(fault: DatabaseFault, failedRequests: number): void {
    this.logger.warn(
      { sqlstate: fault.code, sqlClass: fault.sqlClass, postgresMessage: fault.message, failedRequests },
      `Database fault ${fault.code} (${fault.kind}): "${fault.message}"; ${failedRequests} request(s) answered 503 since the last line of this kind`,
    );
  }
}
