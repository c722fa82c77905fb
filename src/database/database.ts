import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { trace } from '@opentelemetry/api';
import type { Pool, PoolClient } from 'pg';
import { Counter, Gauge, Registry } from 'prom-client';
import type { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DatabaseFaultLog } from './database-fault-log.js';
import { databaseFault, RETRY_DEADLINE_MS } from './database-faults.js';
import { ReadReplicas } from './read-replicas.js';

/** What a unit of work runs its statements on: one transaction's connection, or the Database. */
export type Queryable = { query<T = unknown>(sql: string, parameters?: unknown[]): Promise<T> };

/** Statements and transactions: the Database, or a command's TypeORM EntityManager. */
export type Transactional = Queryable & { transaction<T>(work: (transaction: Queryable) => Promise<T>): Promise<T> };

/**
 * A statement the request paths run over and over, sent named (planned once per connection) unless
 * DATABASE_PREPARED_STATEMENTS is off (docs/operating.md, "PgBouncer"). Read no answer from an UPDATE or DELETE: sent
 * unnamed, TypeORM answers those with [rows, count].
 */
export type Statement = { readonly name: string; readonly text: string };

/** What the Database's own statements and transactions run on: SQL text, or a Statement sent named. */
export type UnitOfWork = { query<T = unknown>(sql: string | Statement, parameters?: unknown[]): Promise<T> };

/** A read a replica may answer; `lineage` pins its writer to the primary, `again` re-reads an answer there. */
type ReadOptions<T> = { lineage?: string; again?: (rows: T) => boolean };

/** What a pooler that keeps no prepared statements answers a named one: unknown here, or prepared by another client. */
const LOST_STATEMENT = new Set(['26000', '42P05']);

/** While requests wait for a slot and the pool releases none, the first in line asks the server again this often. */
const PROBE_EVERY_MS = 100;

/** Requests waiting for a slot, oldest first: one woken per released connection, the first also each PROBE_EVERY_MS. */
class SlotQueue {
  private readonly waiting = new Set<() => void>();
  readonly wakeFirst = () => this.waiting.values().next().value?.();
  private probe?: NodeJS.Timeout;

  get busy(): boolean {
    return this.waiting.size > 0;
  }

  wait(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        if (!this.busy) this.probe = void clearInterval(this.probe);
        resolve();
      };
      const timer = setTimeout(wake, deadline - Date.now());
      this.waiting.add(wake);
      this.probe ??= setInterval(this.wakeFirst, PROBE_EVERY_MS);
    });
  }
}

/**
 * The one way the service reaches its database: statements and transactions on the primary, retried as
 * database-faults.ts says, and the reads a replica may answer. A fault left after the retries is recorded here, once.
 */
@Injectable()
export class Database implements Transactional {
  readonly pool: Pool;
  private readonly slots = new SlotQueue();
  private readonly reads: Counter<'target'>;
  private readonly fallbacks: Counter<'reason'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'preparedStatements'>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly replicas: ReadReplicas,
    private readonly faults: DatabaseFaultLog,
    registry: Registry,
  ) {
    const pool = (this.pool = (dataSource.driver as PostgresDriver).master as Pool);
    pool.on('release', this.slots.wakeFirst);
    new Gauge({
      name: 'animal_store_db_pool_connections',
      help: 'Database pool: connections open (total), idle, and requests waiting for one (waiting).',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, pool[`${state}Count`]);
      },
    });
    this.reads = new Counter({
      name: 'animal_store_database_reads_total',
      help: 'Reads a replica may answer (lists, get by id), by the database that answered: primary or replica.',
      labelNames: ['target'],
      registers: [registry],
    });
    this.fallbacks = new Counter({
      name: 'animal_store_database_read_fallbacks_total',
      help: 'Reads sent to the primary although replicas are set, by reason (docs/operating.md, "Reading from replicas").',
      labelNames: ['reason'],
      registers: [registry],
    });
    if (replicas.configured) for (const target of ['primary', 'replica']) this.reads.inc({ target }, 0);
  }

  query<T>(sql: string | Statement, parameters?: unknown[]): Promise<T> {
    return this.retried(() => this.send<T>(this.dataSource, sql, parameters));
  }

  /** A transaction on the primary, retried whole; faults whose SQLSTATEs the caller `answers` reach it unrecorded. */
  transaction<T>(work: (transaction: UnitOfWork) => Promise<T>, answers?: readonly string[]): Promise<T> {
    const unitOf = (runner: QueryRunner): UnitOfWork => ({ query: (sql, params) => this.on(runner, sql, params) });
    return this.retried(() => this.dataSource.transaction((manager) => work(unitOf(manager.queryRunner!))), answers);
  }

  /** A read on a replica that is fresh enough, else (or when it fails, or `again` says) on the primary. */
  async read<T>(statement: Statement, parameters: unknown[], { lineage, again }: ReadOptions<T> = {}): Promise<T> {
    if (!this.replicas.configured) return this.query<T>(statement, parameters);
    const { replica, fallback } = this.replicas.pick(lineage);
    let reason = fallback;
    if (replica) {
      try {
        const rows = await this.send<T>(replica.dataSource, statement, parameters);
        if (!again?.(rows)) return this.answered('replica', rows);
        reason = 'not_found';
      } catch (error) {
        this.replicas.failed(replica, error);
        reason = 'unreachable';
      }
    }
    if (reason) this.fallbacks.inc({ reason });
    return this.answered('primary', await this.query<T>(statement, parameters));
  }

  /** The reader's writes: its reads go to the primary until a replica must have replayed them. */
  wrote(lineage: string | undefined): void {
    if (lineage !== undefined) this.replicas.pin(lineage);
  }

  private async send<T>(dataSource: DataSource, sql: string | Statement, parameters?: unknown[]): Promise<T> {
    const runner = dataSource.createQueryRunner();
    try {
      return await this.on<T>(runner, sql, parameters);
    } finally {
      await runner.release();
    }
  }

  private async on<T>(runner: QueryRunner, sql: string | Statement, parameters?: unknown[]): Promise<T> {
    if (typeof sql === 'string') return runner.query(sql, parameters) as Promise<T>;
    if (!this.config.preparedStatements) return runner.query(sql.text, parameters) as Promise<T>;
    const client = (await runner.connect()) as PoolClient;
    try {
      return (await client.query({ name: sql.name, text: sql.text, values: parameters })).rows as T;
    } catch (error) {
      if (!LOST_STATEMENT.has((error as { code?: string }).code ?? '')) throw error;
      const advice =
        'the connection keeps no prepared statements (PgBouncer before 1.21 in transaction pooling?): set ' +
        'DATABASE_PREPARED_STATEMENTS=false (docs/operating.md, "PgBouncer")';
      throw new Error(`${(error as Error).message}: ${advice}`, { cause: error });
    }
  }

  private answered<T>(target: 'primary' | 'replica', rows: T): T {
    this.reads.inc({ target });
    trace.getActiveSpan()?.setAttribute('animal_store.read_target', target);
    return rows;
  }

  private async retried<T>(work: () => Promise<T>, answers?: readonly string[]): Promise<T> {
    const deadline = Date.now() + RETRY_DEADLINE_MS;
    if (this.slots.busy) await this.slots.wait(deadline);
    let conflicts = 0;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        const fault = databaseFault(error);
        if (fault?.answer === 'retry-once' && conflicts++ === 0) continue;
        if (fault?.answer !== 'retry-until-deadline' || Date.now() >= deadline) {
          if (fault && !answers?.includes(fault.code)) this.faults.record(fault);
          throw error;
        }
        await this.slots.wait(deadline);
      }
    }
  }
}
