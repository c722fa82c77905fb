import { ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const CLOCK_TICKS_PER_SECOND = 100; // `getconf CLK_TCK` on Linux x86-64 and arm64

/** User + system CPU time of a process so far, in microseconds, from /proc/<pid>/stat. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name start at field 3 (state); utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/** Peak resident set size of a process so far, in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Polls `url` until it answers 200, within `timeoutMs`. */
export async function waitForOk(url: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = String((error as Error).cause ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${last})`);
}

export interface ServerProcess {
  pid: number;
  /** Milliseconds from spawn to the first 200 on the readiness URL. */
  startupMs: number;
  logFile: string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  logFile: string;
  readyUrl: string;
  headers: Record<string, string>;
  timeoutMs?: number;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts a server as its own process group (so `npm start` and what it spawns
 * stop together), its output in `logFile`, and waits for its first 200.
 */
export async function startServer(options: SpawnOptions): Promise<ServerProcess> {
  const log = openSync(options.logFile, 'a');
  const started = performance.now();
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', log, log],
    detached: true,
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid!, 'SIGTERM');
    const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
    await exited(child);
    clearTimeout(killed);
  };
  let ready = false;
  const earlyExit = exited(child).then(() => {
    if (!ready) throw new Error(`${options.command} ${options.args.join(' ')} exited early; see ${options.logFile}`);
  });
  try {
    await Promise.race([waitForOk(options.readyUrl, options.headers, options.timeoutMs ?? 60_000), earlyExit]);
    ready = true;
  } catch (error) {
    ready = true; // the exit that follows is ours
    await stop();
    throw error;
  }
  return { pid: child.pid!, startupMs: performance.now() - started, logFile: options.logFile, stop };
}
