import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../../auth/public.decorator.js';
import { serviceUnavailable } from '../../http/errors/to-api-error.js';
import { ShutdownState } from '../../http/shutdown-state.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

const CHECK_TIMEOUT_MS = 1_000;

/**
 * Probes for orchestrators and load balancers, outside `/v1` and the OpenAPI
 * document. A failing check answers 503 with the Error body (terminus throws a
 * ServiceUnavailableException, which the global filter maps).
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
  ) {}

  /** The process is up and serving HTTP. */
  @Get(OPERATIONS_ROUTES.live)
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Worth sending traffic to: not shutting down, database reachable, schema up to date. */
  @Get(OPERATIONS_ROUTES.ready)
  @HealthCheck()
  ready(@Res({ passthrough: true }) reply: FastifyReply) {
    // Draining after SIGTERM: the answer load balancers are waiting for, not a failure to log as an error.
    if (this.shutdown.isShuttingDown) {
      const draining = serviceUnavailable();
      reply.status(draining.getStatus()).headers(draining.headers);
      return draining.toBody();
    }
    return this.health.check([
      () => this.indicators.check('shutdown').up(),
      () => this.database.pingCheck('database').withTimeout(CHECK_TIMEOUT_MS),
      () => this.migrations.check('migrations').withTimeout(CHECK_TIMEOUT_MS),
    ]);
  }
}
