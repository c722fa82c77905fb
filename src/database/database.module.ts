import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabasePoolConfig } from '../config/app-config.js';
import { DatabaseFaultLog } from './database-fault-log.js';
import { commandDataSourceOptions, dataSourceOptions } from './data-source-options.js';
import { MigrationLockTimeout, runMigrations } from './run-migrations.js';
import { warnWithoutSessionTimeouts } from './session-timeouts.js';

@Module({})
export class DatabaseModule {
  static forRoot(options: MigrationLockTimeout & { url: string; migrationsRun: boolean; pool: DatabasePoolConfig }) {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...dataSourceOptions(options.url, options.pool),
            autoLoadEntities: true,
            retryAttempts: 3,
            retryDelay: 1_000,
          }),
          dataSourceFactory: async (dataSourceOptions) => {
            const dataSource = await new DataSource(dataSourceOptions!).initialize();
            try {
              await warnWithoutSessionTimeouts(dataSource);
              if (options.migrationsRun) {
                // Under the runners' lock and the migrations' timeouts (not TypeORM's `migrationsRun`), on a data
                // source without the requests' query bound.
                const migrator = await new DataSource(commandDataSourceOptions(options.url)).initialize();
                await runMigrations(migrator, options).finally(() => migrator.destroy());
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
