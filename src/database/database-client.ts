import { Logger } from '@nestjs/common';
import pg from 'pg';
import { isRetryableConflict } from './database-faults.js';

const logger = new Logger('Database');

type Query = (...args: unknown[]) => unknown;

/**
 * The pool's connections.
 *
 * node-postgres emits `error` on a client that is between owners (e.g. just released with an error, still
 * closing) when the server terminates its session; with no listener at that moment the process would crash. The
 * pool and TypeORM already drop broken clients; this listener only keeps such a late error from being fatal.
 *
 * A statement run on its own (no transaction open on the connection) that fails with a serialization failure or
 * a deadlock was rolled back whole, and PostgreSQL asks for it to be run again: it is, once. Inside a
 * transaction the whole transaction has to be run again, which only its owner can do (retryOnceOnConflict).
 */
export class DatabaseClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super(config);
    this.on('error', (error) => logger.warn(`Database connection lost: ${error.message}`));
    const query = super.query.bind(this) as Query;
    const retryingQuery: Query = (...args) => {
      const outsideTransaction = this.getTransactionStatus() === 'I';
      const promised = typeof args[0] === 'string' && !args.some((arg) => typeof arg === 'function');
      if (!outsideTransaction || !promised) return query(...args);
      return (query(...args) as Promise<unknown>).catch((error: unknown) => {
        if (!isRetryableConflict(error)) throw error;
        return query(...args);
      });
    };
    this.query = retryingQuery as pg.Client['query'];
  }
}
