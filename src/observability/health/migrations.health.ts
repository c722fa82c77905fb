import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';

/** Up when this build knows its migrations and every one has been applied to the database. */
@Injectable()
export class MigrationsHealthIndicator {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly health: HealthIndicatorService,
  ) {}

  /** `read` may judge the failure of the check's query (a server out of connection slots) before the check does. */
  check<Key extends string>(
    key: Key,
    read: (query: Promise<{ applied: number }>) => Promise<Record<string, unknown>> = (query) => query,
  ) {
    return this.health.check(key).attempt(async () => {
      // A build that lost its migrations would otherwise see "0 applied, 0 pending" and call itself ready.
      if (this.dataSource.migrations.length === 0) throw new Error('this build carries no migrations');
      return read(
        new MigrationExecutor(this.dataSource).getPendingMigrations().then((pending) => {
          if (pending.length > 0) throw new Error(`${pending.length} pending migration(s)`);
          return { applied: this.dataSource.migrations.length };
        }),
      );
    });
  }
}
