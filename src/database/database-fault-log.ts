import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { FAULT_CLASSES, type DatabaseFault } from './database-faults.js';

/** A kind of fault (its SQLSTATE) is logged at most once per this interval, however often it happens. */
export const DATABASE_FAULT_LOG_INTERVAL_MS = 10_000;

/** Each fault left after Database's retries: a warn line per kind at most once per interval, a counter by class. */
@Injectable()
export class DatabaseFaultLog implements OnApplicationShutdown {
  private readonly logger = new Logger('DatabaseFaults');
  /** The kinds failing within the last interval: latest fault, failures since its line. */
  private readonly series = new Map<string, { last: DatabaseFault; failed: number; timer: NodeJS.Timeout }>();
  private readonly faults: Counter<'sqlstate_class'>;

  constructor(registry: Registry) {
    this.faults = new Counter({
      name: 'animal_store_database_faults_total',
      help: 'Database work (a request, answered 503; or a background job) failed for a fault of the database after its retries (src/database/database-faults.ts), by SQLSTATE class: 08 connection, 25 read-only, 40 conflict, 53 resources, 55 lock wait, 57 shutdown or timeout; pool: the local pool had no free connection.',
      labelNames: ['sqlstate_class'],
      registers: [registry],
    });
    // Every class from the start, at 0: a burst of faults right after a start shows in rate().
    for (const sqlClass of FAULT_CLASSES) this.faults.inc({ sqlstate_class: sqlClass }, 0);
  }

  record(fault: DatabaseFault): void {
    this.faults.inc({ sqlstate_class: fault.sqlClass });
    const series = this.series.get(fault.code);
    if (!series) return this.writeAndHold(fault, 1);
    series.last = fault;
    series.failed += 1;
  }

  /** The failures since each kind's last line are written before the process goes. */
  onApplicationShutdown(): void {
    for (const { last, failed, timer } of this.series.values()) {
      clearTimeout(timer);
      if (failed > 0) this.write(last, failed);
    }
    this.series.clear();
  }

  private writeAndHold(last: DatabaseFault, failures: number): void {
    this.write(last, failures);
    const timer = setTimeout(() => {
      const ended = this.series.get(last.code)!;
      this.series.delete(last.code);
      if (ended.failed > 0) this.writeAndHold(ended.last, ended.failed);
    }, DATABASE_FAULT_LOG_INTERVAL_MS).unref();
    this.series.set(last.code, { last, failed: 0, timer });
  }

  private write(fault: DatabaseFault, failures: number): void {
    this.logger.warn(
      { sqlstate: fault.code, sqlClass: fault.sqlClass, postgresMessage: fault.message, failures },
      `Database fault ${fault.code} (${fault.kind}): "${fault.message}"; ${failures} failure(s) since the last line of this kind`,
    );
  }
}
