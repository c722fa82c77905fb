import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';

/** Up when this build knows its migrations and every one has been applied to the database. */
@Injectable()
export class MigrationsHealthIndicator {
  /**
   * Whether the latest check failed because the schema is behind this build (or the build knows no migrations),
   * rather than for want of the database: only the latter is an outage that readiness may ride out.
   */
  schemaBehind = false;

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
      this.schemaBehind = this.dataSource.migrations.length === 0;
      if (this.schemaBehind) throw new Error('this build carries no migrations');
      return read(
        new MigrationExecutor(this.dataSource).getPendingMigrations().then((pending) => {
          this.schemaBehind = pending.length > 0;
          if (this.schemaBehind) throw new Error(`${pending.length} pending migration(s)`);
          return { applied: this.dataSource.migrations.length };
        }),
      );
    });
  }
}
