import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseFault } from './database-faults.js';

/** A kind of fault (its SQLSTATE) is logged at most once per this interval, however many requests it fails. */
export const DATABASE_FAULT_LOG_INTERVAL_MS = 10_000;

/** Counts requests failed by database faults, by SQLSTATE class; the metrics module provides it under this token. */
export abstract class DatabaseFaultCounter {
  abstract recordDatabaseFault(sqlClass: string): void;
}

interface KindState {
  /** The latest fault of this kind, whose message the next line gives. */
  last: DatabaseFault;
  /** Requests it failed since its last line. */
  failed: number;
  timer: NodeJS.Timeout;
}

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
  private readonly kinds = new Map<string, KindState>();

  constructor(private readonly counter: DatabaseFaultCounter) {}

  record(fault: DatabaseFault): void {
    this.counter.recordDatabaseFault(fault.sqlClass);
    const state = this.kinds.get(fault.code);
    if (state) {
      state.last = fault;
      state.failed += 1;
      return;
    }
    this.write(fault, 1);
    this.kinds.set(fault.code, { last: fault, failed: 0, timer: this.endOfInterval(fault.code) });
  }

  /** The requests failed since each kind's last line are written before the process goes. */
  onApplicationShutdown(): void {
    for (const state of this.kinds.values()) {
      clearTimeout(state.timer);
      if (state.failed > 0) this.write(state.last, state.failed);
    }
    this.kinds.clear();
  }

  private endOfInterval(code: string): NodeJS.Timeout {
    return setTimeout(() => this.flush(code), DATABASE_FAULT_LOG_INTERVAL_MS).unref();
  }

  /** At the end of an interval: a line for the requests failed during it, and another interval; or the series ends. */
  private flush(code: string): void {
    const state = this.kinds.get(code)!;
    clearTimeout(state.timer);
    if (state.failed === 0) {
      this.kinds.delete(code);
      return;
    }
    this.write(state.last, state.failed);
    state.failed = 0;
    state.timer = this.endOfInterval(code);
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
