import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ROOT } from '../../support/built-service.js';
import { pollUntil } from '../../support/poll.js';

/**
 * `npm run test:system` runs on two workers, with two locks deciding what may overlap (the specs' roles are
 * jest.system.config.js's `systemSpecs`): the fleet, the failover and the replicas each put a service under steady
 * load and measure its answers, so they take both locks and run alone; the live alerts mostly wait for Prometheus
 * and Alertmanager, so they take the first lock only and run beside the other specs, which take the second, one at a
 * time (docs/testing.md, "The system suite"). Locks are taken in that order, so none waits on another in a circle.
 */
const { alone, beside } = (globalThis as unknown as { systemSpecs: { alone: string[]; beside: string[] } }).systemSpecs;
const ARTIFACTS = join(ROOT, 'test', 'artifacts');
const BESIDE_LOCK = join(ARTIFACTS, 'system-spec-beside.lock');
const ONE_AT_A_TIME_LOCK = join(ARTIFACTS, 'system-spec.lock');
/** Long enough for the longest specs before this one. */
const WAIT_MS = 30 * 60_000;
/** A lock with no holder written after this long was left by a worker ended while taking it. */
const UNCLAIMED_MS = 60_000;

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * A lock is held by the worker running a spec, which writes its pid and its Jest run's (its parent's) into it, and
 * given up when that worker ends (one worker per file: jest.config.js), often by a signal: a lock whose worker is
 * gone, or whose run has ended, is free.
 */
function stale(lock: string): boolean {
  let holder: string;
  try {
    holder = readFileSync(join(lock, 'holder'), 'utf8');
  } catch {
    return Date.now() - statSync(lock).mtimeMs > UNCLAIMED_MS;
  }
  const [worker, run] = holder.split(' ').map(Number);
  return !running(worker) || (run !== process.ppid && !running(run));
}

function take(lock: string): boolean {
  try {
    mkdirSync(lock);
  } catch {
    if (stale(lock)) rmSync(lock, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(lock, 'holder'), `${process.pid} ${process.ppid}`);
  process.once('exit', () => rmSync(lock, { recursive: true, force: true }));
  return true;
}

const spec = basename(expect.getState().testPath ?? '');
const locks = alone.includes(spec)
  ? [BESIDE_LOCK, ONE_AT_A_TIME_LOCK]
  : beside.includes(spec)
    ? [BESIDE_LOCK]
    : [ONE_AT_A_TIME_LOCK];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const lock of locks) {
    await pollUntil(() => take(lock), { timeoutMs: WAIT_MS, intervalMs: 250, what: `the system suite's lock ${lock}` });
  }
}, WAIT_MS + 10_000);
