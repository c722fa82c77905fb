import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { pgPool } from '../../database/pg-pool.js';

/** The application's own Prometheus registry (several apps in one test process never clash). */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor(@InjectDataSource() dataSource: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'animal_store_db_pool_connections',
      help: 'Database pool: connections open (total), idle, and requests waiting for one (waiting).',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const current = pgPool(dataSource) as Pool | undefined;
        this.set({ state: 'total' }, current?.totalCount ?? 0);
        this.set({ state: 'idle' }, current?.idleCount ?? 0);
        this.set({ state: 'waiting' }, current?.waitingCount ?? 0);
      },
    });
  }
}
