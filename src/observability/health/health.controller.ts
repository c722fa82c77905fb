import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Public } from '../../auth/public.decorator.js';
import { databaseFault } from '../../database/database-faults.js';
import { serviceUnavailable } from '../../edge/errors/to-api-error.js';
import { ShutdownState } from '../../edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { DatabaseOutage } from './database-outage.js';
import { MigrationsHealthIndicator } from './migrations.health.js';
import { notReadyReason, ReadinessLog } from './readiness-log.js';

const CHECK_TIMEOUT_MS = 1_000;
/** The checks that need a database connection. */
const DATABASE_CHECKS = ['database', 'migrations'];
/**
 * How long a database and migrations check answers every probe: a flood of `/health/ready` (which needs no key)
 * then costs one round of queries a second, and concurrent probes share the round in progress.
 */
export const READINESS_CACHE_MS = 1_000;
/**
 * How long an instance that cannot reach the database stays ready (DatabaseOutage): longer than a failover of the
 * database takes with the settings docs/operating.md ("High availability") recommends.
 */
export const DATABASE_OUTAGE_READY_MS = 30_000;

/**
 * Probes for orchestrators and load balancers, outside `/v1` and the OpenAPI
 * document. A failing check answers 503 with the Error body; the reason is
 * logged once per change of readiness (ReadinessLog), not on every probe.
 */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly shutdown: ShutdownState,
    private readonly readiness: ReadinessLog,
    private readonly outage: DatabaseOutage,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The process is up and serving HTTP. */
  @Get(OPERATIONS_ROUTES.live)
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /**
   * Worth sending traffic to: not shutting down (checked on every probe), database reachable (or unreachable for
   * less than DATABASE_OUTAGE_READY_MS), schema up to date.
   */
  @Get(OPERATIONS_ROUTES.ready)
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      const result = await this.health.check([
        () => this.accepting(),
        () =>
          this.indicators
            .check('database')
            .attempt(() => unlessCrowded(this.dataSource.query('SELECT 1').then(() => ({}))))
            .withTimeout(CHECK_TIMEOUT_MS)
            .cacheFor(READINESS_CACHE_MS),
        () =>
          this.migrations.check('migrations', unlessCrowded).withTimeout(CHECK_TIMEOUT_MS).cacheFor(READINESS_CACHE_MS),
      ]);
      this.outage.withinGrace(false);
      this.readiness.record(true);
      return result;
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as HealthCheckResult;
      const failed = Object.keys(result.error ?? {});
      const databaseOnly = failed.length > 0 && failed.every((check) => DATABASE_CHECKS.includes(check));
      // Each check keeps its result for READINESS_CACHE_MS on its own, so at the edges of an outage one may answer
      // from before the change and the other from after it: the database answered `SELECT 1` while the migrations
      // read could not reach it. Nothing is decided on that: the instance stays ready and the outage clock as it is,
      // until a round agrees.
      if (databaseOnly && !failed.includes('database') && this.migrations.failure === 'unreachable') {
        this.readiness.record(true);
        return { ...result, status: 'ok' };
      }
      // A failover: the database is unreachable from this instance, and (most likely) from every other one too.
      if (this.outage.withinGrace(databaseOnly && failed.includes('database'))) {
        this.readiness.record(true);
        return { ...result, status: 'ok' };
      }
      this.readiness.record(false, notReadyReason(result.error ?? {}));
      throw serviceUnavailable();
    }
  }

  private accepting() {
    const session = this.indicators.check('shutdown');
    return this.shutdown.isShuttingDown ? session.down('shutting down') : session.up();
  }
}

/**
 * A database check passes when the server refused it only for lack of a connection slot (its row in the fault
 * table). Every replica shares that fault: taking them all out of the load balancer would turn a slow service into
 * none, so the instance stays ready and its requests wait for slots (docs/operating.md, "Readiness during database
 * faults"). A read-only or full database passes the checks (they only read).
 */
async function unlessCrowded(check: Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  try {
    return await check;
  } catch (error) {
    if (databaseFault(error)?.answer === 'retry-until-deadline') return { crowded: true };
    throw error;
  }
}
