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
          migrationsRun: options.migrationsRun,
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
      ],
    };
  }
}
