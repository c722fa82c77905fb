import { Logger } from '@nestjs/common';
import pg from 'pg';

const logger = new Logger('Database');

/**
 * The pool's connections (pg-pool's `Client` option). node-postgres emits `error` on a client that is between
 * owners (e.g. just released with an error, still closing) when the server terminates its session; with no
 * listener at that moment the process would crash. The pool and TypeORM already drop broken clients; this
 * listener only keeps such a late error from being fatal.
 */
export class DatabaseClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super(config);
    this.on('error', (error) => logger.warn(`Database connection lost: ${error.message}`));
  }
}
