import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { databaseFault } from '../../database/database-faults.js';

class SchemaBehind extends Error {}

/** Up when this build knows its migrations and every one has been applied to the database. */
@Injectable()
export class MigrationsHealthIndicator {
  /**
   * Why the latest check failed: the schema is behind this build (or the build knows no migrations), the database
   * could not be read in time or answered with a fault of its own (a row of the fault table), or something else;
   * null when it passed. Readiness rides out only the second kind.
   */
  failure: 'schema' | 'unreachable' | 'other' | null = null;

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
      if (this.dataSource.migrations.length === 0) {
        this.failure = 'schema';
        throw new Error('this build carries no migrations');
      }
      // Until the read answers: past the check's timeout, it is the database that did not.
      this.failure = 'unreachable';
      const result = await read(
        new MigrationExecutor(this.dataSource).getPendingMigrations().then((pending) => {
          if (pending.length > 0) throw new SchemaBehind(`${pending.length} pending migration(s)`);
          return { applied: this.dataSource.migrations.length };
        }),
      ).catch((error: unknown) => {
        this.failure = error instanceof SchemaBehind ? 'schema' : databaseFault(error) ? 'unreachable' : 'other';
        throw error;
      });
      this.failure = null;
      return result;
    });
  }
}
