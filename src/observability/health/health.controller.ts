import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { Public } from '../../auth/public.decorator.js';
import { serviceUnavailable } from '../../edge/errors/to-api-error.js';
import { ShutdownState } from '../../edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { MigrationsHealthIndicator } from './migrations.health.js';
import { notReadyReason, ReadinessLog } from './readiness-log.js';

const CHECK_TIMEOUT_MS = 1_000;
/**
 * How long a database and migrations check answers every probe: a flood of `/health/ready` (which needs no key)
 * then costs one round of queries a second, and concurrent probes share the round in progress.
 */
export const READINESS_CACHE_MS = 1_000;

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
    private readonly database: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly shutdown: ShutdownState,
    private readonly readiness: ReadinessLog,
  ) {}

  /** The process is up and serving HTTP. */
  @Get(OPERATIONS_ROUTES.live)
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Worth sending traffic to: not shutting down (checked on every probe), database reachable, schema up to date. */
  @Get(OPERATIONS_ROUTES.ready)
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      const result = await this.health.check([
        () => this.accepting(),
        () => this.database.pingCheck('database').withTimeout(CHECK_TIMEOUT_MS).cacheFor(READINESS_CACHE_MS),
        () => this.migrations.check('migrations').withTimeout(CHECK_TIMEOUT_MS).cacheFor(READINESS_CACHE_MS),
      ]);
      this.readiness.record(true);
      return result;
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      this.readiness.record(false, notReadyReason((error.getResponse() as HealthCheckResult).error ?? {}));
      throw serviceUnavailable();
    }
  }

  private accepting() {
    const session = this.indicators.check('shutdown');
    return this.shutdown.isShuttingDown ? session.down('shutting down') : session.up();
  }
}
