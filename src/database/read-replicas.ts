import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { dataSourceOptions } from './data-source-options.js';

/** Each replica's lag is measured this often (and the primary's WAL position sampled), never per request. */
export const REPLICA_CHECK_MS = 1_000;
/** Writers pinned to the primary at once, per process; beyond it the least recently pinned go. */
const MAX_PINNED_WRITERS = 100_000;

type FallbackReason = 'lagging' | 'unreachable' | 'not_in_recovery' | 'not_found' | 'own_write';
type State = 'usable' | Exclude<FallbackReason, 'not_found' | 'own_write'>;
type Replica = { name: string; dataSource: DataSource; state: State };

/**
 * The replicas of DATABASE_REPLICA_URL and how fresh each is: a replica lags by the time since the primary, sampled
 * each round, first went past the position it has replayed (no clocks compared, and an idle primary lags nobody).
 */
@Injectable()
export class ReadReplicas implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ReadReplicas');
  private readonly replicas: Replica[];
  private readonly maxLagMs: number;
  /** The primary's WAL positions, oldest first, as far back as a usable replica may lag. */
  private readonly positions: { at: number; lsn: bigint }[] = [];
  private readonly pinned: LRUCache<string, true>;
  private readonly lag: Gauge<'replica'>;
  private next = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) { replicas, databasePool }: Pick<AppConfig, 'replicas' | 'databasePool'>,
    @InjectDataSource() private readonly primary: DataSource,
    registry: Registry,
  ) {
    this.maxLagMs = replicas.maxLagMs;
    this.replicas = replicas.urls.map((url) => {
      const { host, port } = new URL(url);
      const name = `${host}${port ? '' : ':5432'}`;
      return { name, dataSource: new DataSource(dataSourceOptions(url, databasePool)), state: 'unreachable' };
    });
    this.pinned = new LRUCache({ max: MAX_PINNED_WRITERS, ttl: Math.max(1, this.maxLagMs + REPLICA_CHECK_MS) });
    this.lag = new Gauge({
      name: 'animal_store_database_replica_lag_seconds',
      help: "Each replica's replay lag behind the primary as last measured (NaN: not measured: unreachable or not a replica).",
      labelNames: ['replica'],
      registers: [registry],
    });
  }

  get configured(): boolean {
    return this.replicas.length > 0;
  }

  /** The first round before the first request: no read goes to the primary only because nothing was measured yet. */
  async onModuleInit(): Promise<void> {
    if (this.configured) await this.measure();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const { dataSource } of this.replicas) if (dataSource.isInitialized) await dataSource.destroy();
  }

  /** With replicas set: a usable one, in turn; or none, and why the read goes to the primary. */
  pick(lineage?: string): { replica?: Replica; fallback?: FallbackReason } {
    if (lineage !== undefined && this.pinned.has(lineage)) return { fallback: 'own_write' };
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length];
      if (replica.state !== 'usable') continue;
      this.next = (this.next + i + 1) % this.replicas.length;
      return { replica };
    }
    return { fallback: this.replicas[0].state as FallbackReason };
  }

  pin(lineage: string): void {
    if (this.configured) this.pinned.set(lineage, true);
  }

  /** A read failed on `replica`: no more reads there until a round reaches it again. */
  failed(replica: Replica, error: unknown): void {
    if (replica.state === 'usable')
      this.logger.warn(
        `Replica ${replica.name} failed a read (${String(error)}); reads go to the primary until it answers again`,
      );
    replica.state = 'unreachable';
  }

  private async measure(): Promise<void> {
    const now = Date.now();
    try {
      const [{ lsn }] = await this.primary.query<{ lsn: string }[]>(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn",
      );
      this.positions.push({ at: now, lsn: BigInt(lsn) });
      while (this.positions.length > 1 && now - this.positions[1].at > this.maxLagMs + REPLICA_CHECK_MS)
        this.positions.shift();
      await Promise.all(this.replicas.map((replica) => this.measureOne(replica)));
    } catch (error) {
      // Without the primary's position no lag can be measured: each replica keeps its state until the next round.
      this.logger.warn(`Could not sample the primary's WAL position for replica lag: ${String(error)}`);
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.measure(), REPLICA_CHECK_MS).unref();
  }

  /** Rounds run one after another, so a replica is never connected twice at once. */
  private async measureOne(replica: Replica): Promise<void> {
    const before = replica.state;
    let lagMs = NaN;
    try {
      if (!replica.dataSource.isInitialized) await replica.dataSource.initialize();
      const [row] = await replica.dataSource.query<{ recovery: boolean; replayed: string | null }[]>(
        "SELECT pg_is_in_recovery() AS recovery, pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS replayed",
      );
      if (!row.recovery || row.replayed === null) replica.state = 'not_in_recovery';
      else {
        const replayed = BigInt(row.replayed);
        // Behind even the oldest position kept, it lags by more than that position's age: too much, or not yet known.
        const ahead = this.positions.findIndex((position) => position.lsn > replayed);
        lagMs = ahead === -1 ? 0 : Date.now() - this.positions[ahead].at;
        replica.state = ahead === 0 || lagMs > this.maxLagMs ? 'lagging' : 'usable';
      }
    } catch {
      replica.state = 'unreachable';
    }
    this.lag.set({ replica: replica.name }, lagMs / 1000);
    if (replica.state !== before) this.logger.log(`Replica ${replica.name}: ${before} -> ${replica.state}`);
  }
}
