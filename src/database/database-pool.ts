import pg from 'pg';
import { databaseFault } from './database-faults.js';
/** After the server refused a connection, new ones are tried again after this long (slots may have been freed). */
const SLOTS_PROBE_AFTER_MS = 1_000;
/** With no connection of its own open, how long the pool waits before asking the server again. */
const RETRY_CONNECT_AFTER_MS = 100;

type ConnectCallback = Parameters<pg.Pool['connect']>[0] & {};

/** The server has no connection slot left (53300, "sorry, too many clients already"). */
const isTooManyConnections = (error: unknown) => databaseFault(error)?.answer === 'wait-for-connection';
const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

/**
 * node-postgres' pool, but a server out of connection slots slows it down instead of failing it. The plain pool
 * opens a new connection whenever it holds fewer than `max`, and hands the server's refusal (53300) straight to
 * the request, although the pool's own open connections will be free in a moment. Here a refusal lowers the
 * pool's ceiling to the connections it holds (what the server grants it), the request waits for one of them, and
 * the ceiling goes back up after SLOTS_PROBE_AFTER_MS so that freed slots are used. Every wait stays within
 * `connectionTimeoutMillis`; past it the refusal is the answer (its row in src/database/database-faults.ts).
 */
export class DatabasePool extends pg.Pool {
  private readonly configuredMax: number;
  private probeTimer: NodeJS.Timeout | undefined;
  private refusedAt = -Infinity;
  /** Connections established and not yet removed (the pool's total also counts those still connecting). */
  private connected = 0;

  constructor(options: pg.PoolConfig = {}) {
    super(options);
    this.configuredMax = this.options.max;
    this.on('connect', () => (this.connected += 1));
    this.on('remove', () => (this.connected -= 1));
    // The ceiling comes down as soon as a connection is refused, before the pool (which learns of it first) can
    // open yet another connection for a request in its queue: the queue then waits for a connection it holds.
    const lowerCeiling = (error: unknown) => {
      if (isTooManyConnections(error)) this.holdCeiling();
    };
    // pg-pool creates its clients with `new this.Client(options)` and connects them with a callback.
    const pool = this as unknown as { Client: new (options: pg.PoolConfig) => pg.Client };
    const PooledClient = pool.Client;
    pool.Client = function RefusalAwareClient(options: pg.PoolConfig) {
      const client = new PooledClient(options);
      const connect = client.connect.bind(client) as (callback: (error: Error | null) => void) => void;
      Object.assign(client, {
        connect: (callback: (error: Error | null) => void) =>
          connect((error) => {
            lowerCeiling(error);
            callback(error);
          }),
      });
      return client;
    } as unknown as new (options: pg.PoolConfig) => pg.Client;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const connected = this.connectWithin(Date.now() + (this.options.connectionTimeoutMillis || Infinity));
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release?: Error | boolean) => client.release(release)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  private async connectWithin(deadline: number): Promise<pg.PoolClient> {
    // The first attempt is bounded by the pool itself (connectionTimeoutMillis); a retry by what is left of it.
    let attempt = super.connect();
    for (;;) {
      try {
        return await attempt;
      } catch (error) {
        if (!isTooManyConnections(error)) throw error;
        if (Date.now() >= deadline || this.ending) throw error;
        if (this.connected === 0) await sleep(Math.min(RETRY_CONNECT_AFTER_MS, deadline - Date.now()));
        attempt = this.withDeadline(super.connect(), deadline);
      }
    }
  }

  /** Whether the server refused this pool a connection for lack of slots within the last `ms`. */
  refusedForSlotsWithin(ms: number): boolean {
    return Date.now() - this.refusedAt < ms;
  }

  /** No more connections than the pool has established (at least one), until the next probe. */
  private holdCeiling(): void {
    this.refusedAt = Date.now();
    this.options.max = Math.max(1, this.connected);
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.options.max = this.configuredMax;
    }, SLOTS_PROBE_AFTER_MS).unref();
  }

  /**
   * A wait for a pooled connection bounded by what is left of the request's connection timeout (the pool's own
   * bound starts again with each attempt). A connection that arrives too late goes back to the pool.
   */
  private withDeadline(connecting: Promise<pg.PoolClient>, deadline: number): Promise<pg.PoolClient> {
    const left = deadline - Date.now();
    if (!Number.isFinite(left)) return connecting;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          connecting.then(
            (client) => client.release(),
            () => undefined,
          );
          reject(new Error('timeout exceeded when trying to connect'));
        },
        Math.max(0, left),
      );
      connecting.then(
        (client) => {
          clearTimeout(timer);
          resolve(client);
        },
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
