import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../database-server.js';
import { pollUntil } from '../poll.js';
import { daemon, isPrimary, pgProgram, pgUrl, runOnce, settingFlags, workDirectory } from './debian-services.js';

/**
 * Debian's pgBackRest, run as `postgres`: one repository on local disk shared by every node (as a mounted volume would
 * be), and per host a configuration naming its own data directory, as `/etc/pgbackrest/pgbackrest.conf` does.
 */

const STANZA = 'animal-store';

export async function createPgBackRest() {
  const repository = await workDirectory('pgbackrest');
  const restored: string[] = [];
  const servers: { stop(): Promise<void> }[] = [];

  /** `pgbackrest <args>` with the host's configuration: its output, or an error carrying it. */
  const run = async (configFile: string, args: string[], timeoutMs = 120_000) => {
    const result = await runOnce('pgbackrest', [`--config=${configFile}`, `--stanza=${STANZA}`, ...args], {
      unprivileged: true,
      timeoutMs,
    });
    if (result.code !== 0) throw new Error(`pgbackrest ${args.join(' ')} exited with ${result.code}: ${result.output}`);
    return result.output;
  };

  return {
    /** Writes the configuration of the host whose server's socket is in `dir`; returns its path. */
    configure: async (host: { dir: string; dataDir: string; pgPort: number }) => {
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
      ];
      await writeFile(file, config.join('\n'), { mode: 0o644 });
      return file;
    },
    archiveCommand: (configFile: string) => `pgbackrest --config=${configFile} --stanza=${STANZA} archive-push "%p"`,
    run,
    /**
     * The newest backup restored aside, replayed up to `target` (a time PostgreSQL reads), promoted on a port of its
     * own, archiving off so that it never pushes WAL into the cluster's repository. Stopped by `remove()` at the latest.
     */
    restoreToTime: async (configFile: string, target: string) => {
      const dir = await workDirectory('pitr');
      restored.push(dir);
      const dataDir = join(dir, 'data');
      const restoreStarted = Date.now();
      const restore = [`--pg1-path=${dataDir}`, '--type=time', `--target=${target}`, '--target-action=promote'];
      await run(configFile, [...restore, '--archive-mode=off', 'restore']);
      const restoreMs = Date.now() - restoreStarted;
      const port = await freePort();
      const recoveryStarted = Date.now();
      // The restored postgresql.conf is the node's, as Patroni wrote it: its port, socket, authentication files
      // and synchronous standby are the node's own, and are overridden here.
      const settings = settingFlags({
        listen_addresses: '127.0.0.1',
        unix_socket_directories: dir,
        hba_file: join(dataDir, 'pg_hba.conf'),
        ident_file: join(dataDir, 'pg_ident.conf'),
        synchronous_standby_names: '',
        cluster_name: 'animal-store-restored',
      });
      const server = daemon(pgProgram('postgres'), ['-D', dataDir, '-p', String(port), ...settings], {
        unprivileged: true,
        stopSignal: 'SIGINT',
      });
      servers.push(server);
      const url = pgUrl(port);
      let [promoted, exited] = [false, false];
      // PostgreSQL stops when recovery ends short of the target (the WAL past it not archived): fail at once.
      const exitedEarly = server.exited.then(() => {
        exited = true;
        if (!promoted) throw new Error(`The restored copy exited before its recovery ended: ${server.output()}`);
      });
      await Promise.race([
        pollUntil(async () => exited || (await isPrimary(url())), {
          timeoutMs: 120_000,
          what: 'the restored copy to be promoted',
        }),
        exitedEarly,
      ]);
      promoted = true;
      return { ...server, restoreMs, recoveryMs: Date.now() - recoveryStarted, url };
    },
    remove: async () => {
      await Promise.allSettled(servers.map((server) => server.stop()));
      await Promise.allSettled([repository, ...restored].map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
