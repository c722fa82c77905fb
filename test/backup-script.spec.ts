import { expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../src/cli/apikey-commands.js';
import { Problem } from '../src/config/problem.js';
import { ROOT } from './support/built-service.js';

/**
 * compose/backup.sh (the compose files' `backup` service, and k8s/backup-cronjob.yaml) reads BACKUP_INTERVAL with the
 * key CLI's parseDuration. The script runs on the PostgreSQL image, without Node, so the rule is written twice: these
 * cases keep the two in step. The backups themselves: test/docker/compose.docker-spec.ts.
 */
const SCRIPT = join(ROOT, 'compose/backup.sh');

/** bash with `args` and only PATH and `env` set; --norc, as bash reads ~/.bashrc when its stdin is a socket. */
const bash = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync('bash', ['--norc', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
/** `command` run with the script's functions, TARGET the backup directory. */
const sourced = (command: string, directory: string, env: NodeJS.ProcessEnv = {}) =>
  bash(['-c', `source "$0" && TARGET=$1 && ${command}`, SCRIPT, directory], env);
const health = (env: NodeJS.ProcessEnv) => bash([SCRIPT, 'health'], env);

/** A backup file's name as the script gives it, for a backup taken at `at`. */
const backupName = (at: number) => `animal-store-${new Date(at).toISOString().replace(/[-:]/g, '')}.dump`;

function scriptDuration(text: string): { seconds: number } | { problem: string } {
  const result = bash(['-c', 'source "$0" && duration_seconds BACKUP_INTERVAL "$1"', SCRIPT, text]);
  return result.status === 0 ? { seconds: Number(result.stdout.trim()) } : { problem: result.stderr.trim() };
}

describe('compose/backup.sh', () => {
  it.each(['10s', '2s', '15m', '24h', '7d', '90d', '3650d', '999999s'])(
    'reads BACKUP_INTERVAL=%s as the key CLI reads it',
    (text) => {
      const ms = parseDuration('BACKUP_INTERVAL', text);
      expect(typeof ms).toBe('number');
      expect(scriptDuration(text)).toEqual({ seconds: (ms as number) / 1000 });
    },
  );

  it.each(['10', 's', '10 s', '10S', '1e3s', '010s', '', '0d', '-1h', '1.5h', '1w', '3651d', '1000000s'])(
    'refuses BACKUP_INTERVAL=%j with the key CLI’s message',
    (text) => {
      const parsed = parseDuration('BACKUP_INTERVAL', text);
      expect(parsed).toBeInstanceOf(Problem);
      expect(scriptDuration(text)).toEqual({ problem: (parsed as Problem).message });
    },
  );

  it('prints its usage and exits 2 for restore without a file and for an unknown command', () => {
    for (const args of [['restore'], ['backup-everything']]) {
      const result = bash([SCRIPT, ...args], { BACKUP_TARGET: ROOT });
      expect({ args, status: result.status, stdout: result.stdout }).toEqual({ args, status: 2, stdout: '' });
      expect(result.stderr).toMatch(
        /^Usage: backup \[now \| list \| restore <file> \[--force\] \| health \| accept-shrink\]/,
      );
    }
  });

  it('refuses a BACKUP_KEEP or BACKUP_KEEP_WEEKLY that is not a count, before anything else; takes BACKUP_KEEP_WEEKLY=0', () => {
    const list = (env: NodeJS.ProcessEnv) =>
      bash([SCRIPT, 'list'], { BACKUP_TARGET: ROOT, BACKUP_METRICS: '', ...env });
    expect(list({ BACKUP_KEEP: '0' })).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'Invalid BACKUP_KEEP "0": use a whole number of backups to keep, from 1 to 9999.\n',
    });
    expect(list({ BACKUP_KEEP_WEEKLY: '-1' })).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'Invalid BACKUP_KEEP_WEEKLY "-1": use a whole number of backups to keep, from 0 to 9999.\n',
    });
    expect(list({ BACKUP_KEEP_WEEKLY: '0' })).toMatchObject({ status: 0, stdout: '' });
  });

  let directory = '';
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'animal-store-backups-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));
  const dumps = () =>
    readdirSync(directory)
      .filter((name) => name.endsWith('.dump'))
      .sort();

  describe('retention', () => {
    it('a simulated year and a month of daily backups: 7 daily, 4 whole weeks and 12 whole months kept', () => {
      // The clock moved a day at a time (now_s, which every date of the script reads); each file read back as
      // holding no rows, so that the drop guard never holds one.
      const run = sourced(
        `KEEP=7 KEEP_WEEKLY=4 KEEP_MONTHLY=12
          check_backup() { return 1; }
          log() { :; }
          now_s() { echo "$clock"; }
          start=$(date -u -d 2026-01-01T03:00:00Z +%s)
          for day in $(seq 0 399); do
            clock=$((start + day * 86400))
            TZ=UTC printf -v name 'animal-store-%(%Y%m%dT%H%M%S)T.000Z.dump' "$clock"
            touch -d "@$clock" "$TARGET/$name"
            prune "$name" 1 1
          done`,
        directory,
      );
      expect(run).toMatchObject({ status: 0, stderr: '' });
      const kept = readdirSync(directory).map((name) =>
        name.slice('animal-store-'.length, -'T030000.000Z.dump'.length),
      );
      // The last day, Thursday 2027-02-04 (ISO week 2027-W05, month 2027-02), counts neither its week nor its month.
      expect(kept.sort()).toEqual([
        // Months: the last day of each of the 12 before February 2027.
        ...['20260228', '20260331', '20260430', '20260531', '20260630', '20260731', '20260831', '20260930'],
        ...['20261031', '20261130', '20261231'],
        // Weeks: the Sunday of W01 to W03 (W04's is 2027-01-31, a daily and January's).
        ...['20270110', '20270117', '20270124'],
        // The newest 7.
        ...['20270129', '20270130', '20270131', '20270201', '20270202', '20270203', '20270204'],
      ]);
    }, 120_000);

    it('a purge: the hold shown once per run, by health and the metric; accept-shrink ends it', () => {
      const HOUR_MS = 3_600_000;
      /** Backups an hour apart, the oldest first, each holding `pets` animals (as check_backup reads them back). */
      const pets = [5, 5, 5, 1, 1, 1];
      const names = pets.map((_, index) => backupName(Date.now() - (pets.length - index) * HOUR_MS));
      const rows = names.map((name, index) => `[${name}]=${pets[index]}`).join(' ');
      const run = (steps: string) =>
        sourced(
          `KEEP=2 KEEP_WEEKLY=0 KEEP_MONTHLY=0 METRICS=$TARGET/metrics/backup.prom
          declare -A rows=(${rows})
          check_backup() { CHECK_PETS=\${rows[\${1##*/}]}; CHECK_API_KEYS=1; }
          ${steps}`,
          directory,
          { BACKUP_INTERVAL: '24h' },
        );
      // Each backup written, then retention run, as take_backup does.
      const runs = names.map((name) =>
        run(`touch "$TARGET/${name}" && prune ${name} \${rows[${name}]} 1 && write_metrics 0`),
      );
      const errors = runs.map((result) =>
        result.stderr
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; msg: string; files?: string })
          .filter((line) => line.level === 50),
      );
      // Before the purge BACKUP_KEEP=2 prunes as usual (the first is gone after the third). The first small backup:
      // nothing pruned; then one line a run naming every file held (the two of 5 left), never a line per file.
      expect(errors.map((lines) => lines.length)).toEqual([0, 0, 0, 1, 1, 1]);
      expect(errors[3][0].msg).toMatch(
        /^backup holds far fewer rows than the newest kept one: nothing pruned this run/,
      );
      expect(errors[5][0]).toMatchObject({
        msg: expect.stringMatching(/^backups kept past retention: each holds more than twice the rows of the newest/),
        files: `${names[2]} ${names[1]}`,
      });
      expect(dumps()).toEqual([names[1], names[2], names[4], names[5]]);
      const metric = () => readFileSync(join(directory, 'metrics/backup.prom'), 'utf8');
      expect(metric()).toContain('\nanimal_store_backup_retention_held 2\n');
      expect(health({ BACKUP_TARGET: directory, BACKUP_INTERVAL: '24h' })).toMatchObject({
        status: 1,
        stderr:
          'backup: retention holds back 2 backups with more than twice the rows of the newest: check the database (a mass delete?); once the data is as meant, run `backup accept-shrink`.\n',
      });

      const accepted = run('accept_shrink');
      expect(accepted).toMatchObject({ status: 0 });
      expect(accepted.stdout).toBe(
        `Accepted: ${names[5]} (1 animals, 1 API keys) is the baseline; the backups taken before now are kept or removed by BACKUP_KEEP, BACKUP_KEEP_WEEKLY and BACKUP_KEEP_MONTHLY alone. 2 backups kept.\n`,
      );
      expect(dumps()).toEqual(names.slice(4));
      expect(metric()).toContain('\nanimal_store_backup_retention_held 0\n');
      expect(health({ BACKUP_TARGET: directory, BACKUP_INTERVAL: '24h' })).toMatchObject({ status: 0 });
    });
  });

  describe('the host clock set ahead, then back', () => {
    const DAY_MS = 86_400_000;

    /** A backup file as the script names it, written at `at` (name and modification time). */
    const backupAt = (at: number) => {
      const name = backupName(at);
      writeFileSync(join(directory, name), 'not read here');
      utimesSync(join(directory, name), at / 1000, at / 1000);
      return name;
    };

    it('a file dated 45 days ahead: an error line, an unhealthy check, the metric; the real backup is the newest', () => {
      const real = backupAt(Date.now() - 3_600_000);
      const ahead = backupAt(Date.now() + 45 * DAY_MS);
      const unhealthy = health({ BACKUP_TARGET: directory });
      expect(unhealthy.status).toBe(1);
      expect(unhealthy.stderr).toBe(
        `backup: backups dated in the future (${ahead}): the host clock was ahead when they were written: they count as no backup and hold no retention slot; check the clock (timedatectl), then move them out of the backup directory.\n`,
      );
      const run = sourced(
        'backups_newest_first && report_future && METRICS=$TARGET/m.prom && write_metrics 0',
        directory,
      );
      expect(run.stdout).toBe(`${real}\n`);
      const logged = run.stderr.split('\n').filter((line) => line.startsWith('{'));
      expect(logged.map((line) => JSON.parse(line) as unknown)).toEqual([
        expect.objectContaining({ level: 50, files: ahead }),
      ]);
      const metrics = readFileSync(join(directory, 'm.prom'), 'utf8');
      expect(metrics).toContain('\nanimal_store_backup_future_files 1\n');
      const lastSuccess = Number(/^animal_store_backup_last_success_timestamp_seconds (\d+)$/m.exec(metrics)?.[1]);
      expect(lastSuccess).toBeLessThanOrEqual(Date.now() / 1000);

      // The clock set back right: the file moved out, the check is healthy again.
      rmSync(join(directory, ahead));
      expect(health({ BACKUP_TARGET: directory }).status).toBe(0);
    });

    it('seven files dated ahead hold no BACKUP_KEEP slot: the real backups are kept, the future ones left alone', () => {
      const future = Array.from({ length: 7 }, (_, index) => backupAt(Date.now() + (40 + index) * DAY_MS));
      const real = [3, 2, 1].map((days) => backupAt(Date.now() - days * DAY_MS));
      const written = backupAt(Date.now() - 1_000);
      const run = sourced(`KEEP=3 KEEP_WEEKLY=0 KEEP_MONTHLY=0 prune ${written} 5 1`, directory);
      expect(run.status).toBe(0);
      expect(readdirSync(directory).sort()).toEqual([...real.slice(1), written, ...future].sort());
    });
  });
});
