import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Gauge, Registry } from 'prom-client';
import { DataSource, MigrationExecutor } from 'typeorm';
import { databaseFault } from '../../database/database-faults.js';
import { Database } from '../../database/database.js';

const CHECK_TIMEOUT_MS = 1_000;
/** One round answers every probe for this long, and concurrent probes share the round in progress. */
export const READINESS_CACHE_MS = 1_000;

/** `outage`: the database did not answer (in time), which the instance rides out (DatabaseOutage). */
type Verdict = 'ready' | 'outage' | 'not-ready';
type Round = { verdict: Verdict; checks: HealthIndicatorResult };

/**
 * The database checks (`SELECT 1`, the migrations table read), run, cached and classified together, on a connection
 * of their own: a request pool full of waiting requests is a crowded instance, not an unreachable database.
 */
@Injectable()
export class ReadinessRound implements OnApplicationShutdown {
  private own?: Promise<DataSource>;
  private readonly rounds = new LRUCache<'round', Round>({
    max: 1,
    ttl: READINESS_CACHE_MS,
    ttlResolution: 0,
    fetchMethod: () => this.run(),
  });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly database: Database,
    private readonly indicators: HealthIndicatorService,
    registry: Registry,
  ) {
    const current = () => this.current();
    // Each scrape reads the round (at most one per READINESS_CACHE_MS): the value needs no probe and no traffic.
    new Gauge({
      name: 'animal_store_database_reachable',
      help: 'Whether this instance reached the database in its latest readiness round (SELECT 1 and the migrations read within 1 s, on a connection outside the request pool): 1 yes, 0 no.',
      registers: [registry],
      async collect() {
        this.set((await current()).verdict === 'outage' ? 0 : 1);
      },
    });
  }

  /** The latest round, run now if none is fresh; a round this call did not start is marked `cachedResponse`. */
  async current(): Promise<Round> {
    const status: LRUCache.Status<'round', Round> = {};
    const { verdict, checks } = (await this.rounds.fetch('round', { status }))!;
    if (status.fetch === 'miss') return { verdict, checks };
    const marked = Object.entries(checks).map(([key, check]) => [key, { ...check, cachedResponse: true }]);
    return { verdict, checks: Object.fromEntries(marked) as HealthIndicatorResult };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.own?.then((own) => own.destroy()).catch(() => undefined);
  }

  /** One connection beside the request pool, made again after a round that could not make it. */
  private connection(): Promise<DataSource> {
    const options = this.dataSource.options;
    return (this.own ??= new DataSource({ ...options, extra: { ...(options.extra as object), max: 1 } })
      .initialize()
      .catch((error: unknown) => {
        this.own = undefined;
        throw error;
      }));
  }

  private async run(): Promise<Round> {
    let migrationsFailure: Verdict = 'outage';
    const waiting = this.database.pool.waitingCount;
    const [database, migrations] = await Promise.all([
      this.check('database', async () => {
        const data = await unlessCrowded(this.connection().then((own) => own.query('SELECT 1').then(() => ({}))));
        return waiting > 0 ? { ...data, crowded: true, waiting } : data;
      }),
      this.check('migrations', () =>
        unlessCrowded(this.applied()).catch((error: unknown) => {
          // Past the check's timeout, it is the database that did not answer.
          if (!databaseFault(error)) migrationsFailure = 'not-ready';
          throw error;
        }),
      ),
    ]);
    const checks = { ...database, ...migrations };
    if (database.database.status === 'down') return { verdict: 'outage', checks };
    return { verdict: migrations.migrations.status === 'up' ? 'ready' : migrationsFailure, checks };
  }

  private check(key: string, work: () => Promise<Record<string, unknown>>) {
    return this.indicators.check(key).attempt(work).withTimeout(CHECK_TIMEOUT_MS);
  }

  private async applied(): Promise<Record<string, unknown>> {
    // A build that lost its migrations would otherwise see "0 applied, 0 pending" and call itself ready.
    if (this.dataSource.migrations.length === 0) throw new Error('this build carries no migrations');
    const pending = await new MigrationExecutor(await this.connection()).getPendingMigrations();
    if (pending.length > 0) throw new Error(`${pending.length} pending migration(s)`);
    return { applied: this.dataSource.migrations.length };
  }
}

/** A check refused only for lack of a connection slot passes (docs/operating.md, "Resilience"). */
const unlessCrowded = (check: Promise<Record<string, unknown>>) =>
  check.catch((error: unknown): Record<string, unknown> => {
    if (databaseFault(error)?.answer === 'retry-until-deadline') return { crowded: true };
    throw error;
  });
