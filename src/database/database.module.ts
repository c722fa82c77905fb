import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config.js';
import { DatabaseFaultLog } from './database-fault-log.js';
import { commandDataSourceOptions, dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './run-migrations.js';
import { warnWithoutSessionTimeouts } from './session-timeouts.js';

@Module({})
export class DatabaseModule {
  static forRoot(config: DatabaseConfig & { databaseUrl: string }) {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...dataSourceOptions(config.databaseUrl, config.databasePool),
            autoLoadEntities: true,
            retryAttempts: 3,
            retryDelay: 1_000,
          }),
          dataSourceFactory: async (dataSourceOptions) => {
            const dataSource = await new DataSource(dataSourceOptions!).initialize();
            try {
              await warnWithoutSessionTimeouts(dataSource);
              if (config.migrationsRun) {
                // Under the runners' lock and bounds (not TypeORM's `migrationsRun`), free of query_timeout.
                const migrator = await new DataSource(commandDataSourceOptions(config.databaseUrl)).initialize();
                await runMigrations(migrator, config).finally(() => migrator.destroy());
              }
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        }),
      ],
      providers: [DatabaseFaultLog],
      exports: [DatabaseFaultLog],
    };
  }
}
