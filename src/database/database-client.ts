import { Logger } from '@nestjs/common';
import type { Socket } from 'node:net';
import pg from 'pg';

const logger = new Logger('Database');

/** How often open connections are checked for a query past its deadline. */
const SWEEP_INTERVAL_MS = 250;

export interface DatabaseClientConfig extends pg.ClientConfig {
  /**
   * How long a query may go unanswered before its connection is dropped and
   * the query fails with ETIMEDOUT (a 503). `statement_timeout` bounds a slow
   * query on a live server; this bounds one whose server or network went silent.
   */
  queryDeadlineMs?: number;
}

/**
 * The pool's connections. node-postgres emits `error` on a client that is
 * between owners (e.g. just released with an error, still closing) when the
 * server terminates its session; with no listener at that moment the process
 * would crash. The pool and TypeORM already drop broken clients; this
 * listener only keeps such a late error from being fatal.
 *
 * It also enforces the query deadline, with one timer that checks every
 * connection. node-postgres' own `query_timeout` arms a timer per query: under
 * load, young-generation collections then took 1.7 times as long, full ones
 * came twice as often, and most of what they promoted was query rows
 * (README, "Performance").
 */
export class DatabaseClient extends pg.Client {
  private static readonly watched = new Set<DatabaseClient>();
  private static sweeper: NodeJS.Timeout | undefined;

  private readonly deadlineMs: number;
  /**
   * When the latest query was sent (epoch ms); 0 once the connection is idle. The pool hands a
   * connection to its next query from the callback of the previous one, before it ever goes idle.
   */
  private waitingSince = 0;

  constructor(config: DatabaseClientConfig = {}) {
    super(config);
    this.deadlineMs = config.queryDeadlineMs ?? 0;
    this.on('error', (error) => logger.warn(`Database connection lost: ${error.message}`));
    if (this.deadlineMs > 0) {
      this.on('drain', () => (this.waitingSince = 0));
      this.on('end', () => DatabaseClient.unwatch(this));
      DatabaseClient.watch(this);
    }
  }

  // Typed loosely: pg.Client declares a dozen overloads, and this only notes the time before passing them on.
  override query(...args: any[]): any {
    this.waitingSince = Date.now();
    return Reflect.apply(pg.Client.prototype.query, this, args);
  }

  private static watch(client: DatabaseClient): void {
    DatabaseClient.watched.add(client);
    DatabaseClient.sweeper ??= setInterval(DatabaseClient.sweep, SWEEP_INTERVAL_MS).unref();
  }

  private static unwatch(client: DatabaseClient): void {
    DatabaseClient.watched.delete(client);
    if (DatabaseClient.watched.size === 0 && DatabaseClient.sweeper) {
      clearInterval(DatabaseClient.sweeper);
      DatabaseClient.sweeper = undefined;
    }
  }

  private static sweep(this: void): void {
    const now = Date.now();
    for (const client of DatabaseClient.watched) {
      if (client.waitingSince !== 0 && now - client.waitingSince > client.deadlineMs) client.abandon();
    }
  }

  /** Drops the connection; node-postgres fails its queries with this error and the pool discards it. */
  private abandon(): void {
    DatabaseClient.unwatch(this);
    const error = Object.assign(new Error(`No answer from the database within ${this.deadlineMs} ms`), {
      code: 'ETIMEDOUT',
    });
    // What node-postgres' own query_timeout does to a connection it gives up on.
    (this.connection as unknown as { stream: Socket }).stream.destroy(error);
  }
}
