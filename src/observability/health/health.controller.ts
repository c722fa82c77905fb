import { Controller, Get, Inject, Logger } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { Public } from '../../auth/public.decorator.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ShutdownState } from '../../edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { DatabaseOutage } from './database-outage.js';
import { ReadinessRound } from './readiness-round.js';

/** Logs readiness when it changes, one line each time, instead of a stack on every probe. */
export class ReadinessLog {
  private readonly logger = new Logger('Readiness');
  /** Why the instance was last not ready, '' if ready; undefined before the first probe. */
  private last: string | undefined;

  record(checks: HealthIndicatorResult): void {
    const reason = Object.entries(checks)
      .filter(([, { status }]) => status === 'down')
      .map(([check, { message }]) => `${check}: ${typeof message === 'string' && message ? message : 'down'}`)
      .join('; ');
    if (reason === this.last) return;
    if (reason === '') this.logger.log(this.last === undefined ? 'Ready' : 'Ready again');
    else this.logger.warn(`Not ready: ${reason}`);
    this.last = reason;
  }
}

/** Probes for orchestrators and load balancers, outside `/v1` and the OpenAPI document. */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  private readonly readiness = new ReadinessLog();
  private readonly outage: DatabaseOutage;
  private readonly recovering: string;

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly round: ReadinessRound,
    private readonly shutdown: ShutdownState,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.outage = new DatabaseOutage(config.readinessOutageGraceMs, config.readinessRecoveryMs);
    this.recovering = `answering again; back in service once fewer than half its recent rounds fail (after a full outage, READINESS_RECOVERY_MS: ${config.readinessRecoveryMs} ms)`;
  }

  @Get(OPERATIONS_ROUTES.live)
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Not shutting down, database reachable (or `degraded`: failed rounds that did not take it out), schema current. */
  @Get(OPERATIONS_ROUTES.ready)
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    const { verdict, checks } = await this.round.current();
    const state = this.outage.record(verdict === 'outage');
    const database =
      state === 'riding-out'
        ? this.degraded(checks)
        : state === 'recovering'
          ? { ...checks, ...this.indicators.check('database').down(this.recovering) }
          : checks;
    const session = this.indicators.check('shutdown');
    const shutdown = this.shutdown.isShuttingDown ? session.down('shutting down') : session.up();
    this.readiness.record({ ...shutdown, ...database });
    // terminus answers 503 when a check is down, which the error filter turns into the Error body.
    return this.health.check([() => shutdown, () => database]);
  }

  /** The failed checks of a round the instance rides out: still serving, but impaired. */
  private degraded(checks: HealthIndicatorResult): HealthIndicatorResult {
    const marked = Object.entries(checks).map(([key, { status, ...data }]) =>
      status === 'down' ? this.indicators.check(key).degraded(data) : { [key]: { status, ...data } },
    );
    return Object.assign({}, ...marked) as HealthIndicatorResult;
  }
}
