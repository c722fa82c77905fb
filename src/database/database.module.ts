import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config.js';
import { DatabaseFaultLog } from './database-fault-log.js';
import { Database } from './database.js';
import { ReadReplicas } from './read-replicas.js';
import { commandDataSourceOptions, dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './run-migrations.js';
import { warnWithoutSessionTimeouts } from './session-timeouts.js';

@Module({})
export class DatabaseModule {
  static forRoot(config: DatabaseConfig) {
    return {
      module: DatabaseModule,
      // Every feature reaches the database through the one Database provider.
      global: true,
      imports: [
        // TypeORM's retry covers connecting only: a migration that fails must not run again.
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...dataSourceOptions(config.databaseUrl, config.databasePool),
            autoLoadEntities: true,
            retryAttempts: 3,
            retryDelay: 1_000,
          }),
        }),
      ],
      providers: [
        DatabaseFaultLog,
        ReadReplicas,
        Database,
        {
          // Resolved once the pending migrations are applied (or MIGRATIONS_RUN is off), outside TypeORM's retry.
          provide: Symbol('MIGRATED'),
          inject: [DataSource],
          useFactory: async (dataSource: DataSource) => {
            await warnWithoutSessionTimeouts(dataSource);
            if (!config.migrationsRun) return;
            // Under the runners' lock and bounds (not TypeORM's `migrationsRun`), free of query_timeout.
            const migrator = await new DataSource(commandDataSourceOptions(config.databaseUrl)).initialize();
            await runMigrations(migrator, config).finally(() => migrator.destroy());
          },
        },
      ],
      exports: [Database],
    };
  }
}
