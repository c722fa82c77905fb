import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT } from '../../support/built-service.js';
import { pollUntil } from '../../support/poll.js';

/**
 * The scheduling jest.system.config.js describes: the exclusive specs take one lock in turn, and every spec but the
 * measured ones runs at a low CPU priority, inherited by every process it starts, taking only the CPU they leave idle.
 */
const { exclusive, measured } = (globalThis as unknown as { systemSpecs: Record<'exclusive' | 'measured', string[]> })
  .systemSpecs;
const LOCK = join(ROOT, 'test', 'artifacts', 'system-spec-exclusive.lock');
/** Long enough for the exclusive specs before this one. */
const WAIT_MS = 30 * 60_000;
/** A lock with no holder written after this long was left by a worker ended while taking it. */
const UNCLAIMED_MS = 60_000;
const BACKGROUND_PRIORITY = 10;

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The lock holds the pid of the worker running a spec and of its Jest run. A worker ends after its one spec
 * (jest.system.config.js), often by a signal: a lock whose worker is gone, or whose run has ended, is free.
 */
function stale(): boolean {
  let holder: string;
  try {
    holder = readFileSync(join(LOCK, 'holder'), 'utf8');
  } catch {
    return Date.now() - statSync(LOCK).mtimeMs > UNCLAIMED_MS;
  }
  const [worker, run] = holder.split(' ').map(Number);
  return !running(worker) || (run !== process.ppid && !running(run));
}

function take(): boolean {
  try {
    mkdirSync(LOCK);
  } catch {
    if (stale()) rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(LOCK, 'holder'), `${process.pid} ${process.ppid}`);
  process.once('exit', () => rmSync(LOCK, { recursive: true, force: true }));
  return true;
}

beforeAll(async () => {
  const spec = basename(expect.getState().testPath ?? '');
  if (!measured.includes(spec)) setPriority(BACKGROUND_PRIORITY);
  if (!exclusive.includes(spec)) return;
  mkdirSync(join(LOCK, '..'), { recursive: true });
  await pollUntil(take, { timeoutMs: WAIT_MS, intervalMs: 250, what: `the system suite's lock ${LOCK}` });
}, WAIT_MS + 10_000);
