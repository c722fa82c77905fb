import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { databaseFault } from '../../database/database-faults.js';

const CHECK_TIMEOUT_MS = 1_000;

/**
 * How long one round of database checks answers every probe: a flood of `/health/ready` (which needs no key) then
 * costs one round of queries a second, and concurrent probes share the round in progress.
 */
export const READINESS_CACHE_MS = 1_000;

/**
 * What a round found: `ready`; `outage`, the database could not be reached (or not in time), which the instance
 * rides out for its grace (DatabaseOutage); `not-ready`, the schema is behind this build or a read failed for
 * another reason.
 */
export type Verdict = 'ready' | 'outage' | 'not-ready';

export type Round = {
  verdict: Verdict;
  /** terminus's result of each check, `database` and `migrations`. */
  checks: HealthIndicatorResult;
};

/**
 * One round of the database checks (`SELECT 1`, and the migrations table read), run together, cached together and
 * classified once, so that no two checks' answers can come from either side of a change.
 */
@Injectable()
export class ReadinessRound {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async current(): Promise<Round> {
    const { round } = await this.indicators
      .check('round')
      .attempt(() => this.run())
      .cacheFor(READINESS_CACHE_MS);
    const { verdict, checks, cachedResponse } = round as unknown as Round & { cachedResponse?: true };
    if (!cachedResponse) return { verdict, checks };
    const marked = Object.entries(checks).map(([key, check]) => [key, { ...check, cachedResponse }]);
    return { verdict, checks: Object.fromEntries(marked) as HealthIndicatorResult };
  }

  private async run(): Promise<Round> {
    let migrationsFailure: Verdict = 'outage';
    const [database, migrations] = await Promise.all([
      this.indicators
        .check('database')
        .attempt(() => unlessCrowded(this.dataSource.query('SELECT 1').then(() => ({}))))
        .withTimeout(CHECK_TIMEOUT_MS),
      this.indicators
        .check('migrations')
        .attempt(() =>
          unlessCrowded(this.applied()).catch((error: unknown) => {
            // Past the check's timeout, it is the database that did not answer.
            if (!databaseFault(error)) migrationsFailure = 'not-ready';
            throw error;
          }),
        )
        .withTimeout(CHECK_TIMEOUT_MS),
    ]);
    const verdict: Verdict =
      database.database.status === 'down'
        ? 'outage'
        : migrations.migrations.status === 'up'
          ? 'ready'
          : migrationsFailure;
    return { verdict, checks: { ...database, ...migrations } };
  }

  /** Every migration this build knows has been applied to the database. */
  private async applied(): Promise<Record<string, unknown>> {
    // A build that lost its migrations would otherwise see "0 applied, 0 pending" and call itself ready.
    if (this.dataSource.migrations.length === 0) throw new Error('this build carries no migrations');
    const pending = await new MigrationExecutor(this.dataSource).getPendingMigrations();
    if (pending.length > 0) throw new Error(`${pending.length} pending migration(s)`);
    return { applied: this.dataSource.migrations.length };
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
