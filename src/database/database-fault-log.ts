import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseFault } from './database-faults.js';

/** A kind of fault (its SQLSTATE) is logged at most once per this interval, however many requests it fails. */
export const DATABASE_FAULT_LOG_INTERVAL_MS = 10_000;

/** Counts requests failed by database faults, by SQLSTATE class; the metrics module provides it under this token. */
export abstract class DatabaseFaultCounter {
  abstract recordDatabaseFault(sqlClass: string): void;
}

/** The latest fault of a kind, the requests it failed since its last line, and the end of its interval. */
type Series = { last: DatabaseFault; failed: number; timer: NodeJS.Timeout };

/**
 * One warn line when a kind of fault first fails a request, then at most one per interval while it goes on, with its
 * message and the requests it failed since (no stack); a quiet interval ends the series. Each failure is counted.
 */
@Injectable()
export class DatabaseFaultLog implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseFaults');
  /** By SQLSTATE (or what stands for it), a bounded set: only the kinds failing within the last interval. */
  private readonly series = new Map<string, Series>();

  constructor(private readonly counter: DatabaseFaultCounter) {}

  record(fault: DatabaseFault): void {
    this.counter.recordDatabaseFault(fault.sqlClass);
    const series = this.series.get(fault.code);
    if (series) {
      series.last = fault;
      series.failed += 1;
      return;
    }
    this.write(fault, 1);
    this.hold(fault);
  }

  /** The requests failed since each kind's last line are written before the process goes. */
  onApplicationShutdown(): void {
    for (const { last, failed, timer } of this.series.values()) {
      clearTimeout(timer);
      if (failed > 0) this.write(last, failed);
    }
    this.series.clear();
  }

  /** Opens an interval for `last`'s kind; at its end, a line if requests failed meanwhile, and another interval. */
  private hold(last: DatabaseFault): void {
    const timer = setTimeout(() => {
      const ended = this.series.get(last.code)!;
      this.series.delete(last.code);
      if (ended.failed === 0) return;
      this.write(ended.last, ended.failed);
      this.hold(ended.last);
    }, DATABASE_FAULT_LOG_INTERVAL_MS).unref();
    this.series.set(last.code, { last, failed: 0, timer });
  }

  private write(fault: DatabaseFault, failedRequests: number): void {
    this.logger.warn(
      { sqlstate: fault.code, sqlClass: fault.sqlClass, postgresMessage: fault.message, failedRequests },
      `Database fault ${fault.code} (${fault.kind}): "${fault.message}"; ${failedRequests} request(s) answered 503 since the last line of this kind`,
    );
  }
}
