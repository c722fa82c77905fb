import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../database-server.js';
import { pollUntil } from '../poll.js';
import { Daemon, daemon, runOnce, workDirectory } from './debian-services.js';

/**
 * Continuous archiving and point-in-time recovery with pgBackRest (Debian's `pgbackrest`; `.ci/run` installs it):
 * one repository on local disk, shared by every node as a mounted volume or a repository host would be in
 * production, and on each host a configuration of its own naming its own data directory, as
 * `/etc/pgbackrest/pgbackrest.conf` does on a real host. pgBackRest runs as `postgres`, as PostgreSQL does.
 */

export const STANZA = 'animal-store';

/** Polls until a connection to `url` finds a server out of recovery (a primary), or until `stop()`. */
export const pollUntilPrimary = (url: string, options: { timeoutMs: number; what: string }, stop = () => false) =>
  pollUntil(async () => {
    if (stop()) return true;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    await client.connect();
    try {
      return (await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0].r === false;
    } finally {
      await client.end();
    }
  }, options);

/** A PostgreSQL server's host, as pgBackRest sees it. */
export interface PgBackRestHost {
  /** Its directory: the configuration file goes there, and it holds the server's Unix socket. */
  dir: string;
  dataDir: string;
  pgPort: number;
}

/** A copy of the cluster restored into a data directory of its own, started on a port of its own. */
export interface RestoredServer extends Daemon {
  /** `pgbackrest restore`: the backup's files and the recovery settings written. */
  restoreMs: number;
  /** From the server's start to the end of recovery: the archived WAL replayed to the target, then promoted. */
  recoveryMs: number;
  url(database?: string, user?: string): string;
}

export interface PgBackRest {
  repository: string;
  /** Writes the host's configuration; returns its path. */
  configure(host: PgBackRestHost): Promise<string>;
  /** PostgreSQL's `archive_command` on a host configured by `configFile`. */
  archiveCommand(configFile: string): string;
  /** `pgbackrest <args>` with the host's configuration, as `postgres`: its output, or an error carrying it. */
  run(configFile: string, args: string[], timeoutMs?: number): Promise<string>;
  /**
   * Restores the newest backup into a new data directory and replays the archive up to `target` (a time
   * PostgreSQL reads), then promotes the copy and starts it on a port of its own, with archiving off so that it
   * never pushes WAL into the cluster's repository. The caller stops it.
   */
  restoreToTime(configFile: string, target: string, pgBin: string): Promise<RestoredServer>;
  /** Removes the repository. */
  remove(): Promise<void>;
}

export async function createPgBackRest(): Promise<PgBackRest> {
  const repository = await workDirectory('pgbackrest');
  const restored: { dir: string; server?: Daemon }[] = [];

  const run = async (configFile: string, args: string[], timeoutMs = 120_000) => {
    const result = await runOnce('pgbackrest', [`--config=${configFile}`, `--stanza=${STANZA}`, ...args], {
      unprivileged: true,
      timeoutMs,
    });
    if (result.code !== 0) {
      throw new Error(`pgbackrest ${args.join(' ')} exited with ${result.code}: ${result.output}`);
    }
    return result.output;
  };

  return {
    repository,
    configure: async (host) => {
      const file = join(host.dir, 'pgbackrest.conf');
      const config = [
        '[global]',
        `repo1-path=${join(repository, 'repo')}`,
        // Two full backups kept, with the WAL that makes each of them restorable to any point after it.
        'repo1-retention-full=2',
        'compress-type=zst',
        // A backup starts with an immediate checkpoint, not the next scheduled one.
        'start-fast=y',
        `lock-path=${join(repository, 'lock')}`,
        'log-level-console=warn',
        'log-level-file=off',
        '',
        `[${STANZA}]`,
        `pg1-path=${host.dataDir}`,
        `pg1-port=${host.pgPort}`,
        `pg1-socket-path=${host.dir}`,
        'pg1-user=postgres',
        '',
      ].join('\n');
      await writeFile(file, config, { mode: 0o644 });
      return file;
    },
    archiveCommand: (configFile) => `pgbackrest --config=${configFile} --stanza=${STANZA} archive-push "%p"`,
    run,
    restoreToTime: async (configFile, target, pgBin) => {
      const dir = await workDirectory('pitr');
      const entry: { dir: string; server?: Daemon } = { dir };
      restored.push(entry);
      const dataDir = join(dir, 'data');
      const restoreStarted = Date.now();
      await run(configFile, [
        `--pg1-path=${dataDir}`,
        '--type=time',
        `--target=${target}`,
        '--target-action=promote',
        '--archive-mode=off',
        'restore',
      ]);
      const restoreMs = Date.now() - restoreStarted;
      const port = await freePort();
      const recoveryStarted = Date.now();
      // The restored postgresql.conf is the node's, as Patroni wrote it: its port, socket, authentication files
      // and synchronous standby are the node's own, and are overridden here.
      const server = daemon(
        join(pgBin, 'postgres'),
        [
          '-D',
          dataDir,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          `unix_socket_directories=${dir}`,
          '-c',
          `hba_file=${join(dataDir, 'pg_hba.conf')}`,
          '-c',
          `ident_file=${join(dataDir, 'pg_ident.conf')}`,
          '-c',
          'synchronous_standby_names=',
          '-c',
          'cluster_name=animal-store-restored',
        ],
        { unprivileged: true },
      );
      entry.server = server;
      const url = (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`;
      let [promoted, exited] = [false, false];
      // PostgreSQL stops when recovery ends short of the target (the WAL past it not archived): fail at once.
      const exitedEarly = server.exited.then(() => {
        exited = true;
        if (!promoted) throw new Error(`The restored copy exited before its recovery ended: ${server.output()}`);
      });
      await Promise.race([
        // Stops polling once the race is lost already.
        pollUntilPrimary(url(), { timeoutMs: 120_000, what: 'the restored copy to be promoted' }, () => exited),
        exitedEarly,
      ]);
      promoted = true;
      return {
        ...server,
        restoreMs,
        recoveryMs: Date.now() - recoveryStarted,
        url,
        stop: () => server.stop('SIGINT'), // fast shutdown
      };
    },
    remove: async () => {
      await Promise.allSettled(restored.flatMap((entry) => (entry.server ? [entry.server.stop('SIGINT')] : [])));
      await Promise.allSettled(
        [repository, ...restored.map((entry) => entry.dir)].map((dir) => rm(dir, { recursive: true, force: true })),
      );
    },
  };
}
