import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabasePoolConfig } from '../config/app-config.js';
import { DatabaseFaultLog } from './database-fault-log.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrationsAt } from './run-migrations.js';
import { applySessionTimeouts } from './session-timeouts.js';

@Module({})
export class DatabaseModule {
  static forRoot(options: {
    url: string;
    migrationsRun: boolean;
    migrationLockTimeoutMs: number;
    pool: DatabasePoolConfig;
  }): DynamicModule {
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
              await applySessionTimeouts(dataSource);
              // Under the advisory lock and the migrations' own bounds, unlike TypeORM's own `migrationsRun`.
              if (options.migrationsRun) await runMigrationsAt(options.url, options);
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
