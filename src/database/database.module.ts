import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source-options.js';

@Module({})
export class DatabaseModule {
  static forRoot(options: { url: string; migrationsRun: boolean }): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(options.url),
          // Each feature module registers the entities it owns with TypeOrmModule.forFeature.
          autoLoadEntities: true,
          migrationsRun: options.migrationsRun,
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
      ],
    };
  }
}
