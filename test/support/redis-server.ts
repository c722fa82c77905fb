import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './database-server.js';

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(1_000, () => socket.destroy());
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/**
 * A throw-away Debian `redis-server` on a free port (or `port`, to start one again where clients expect it) with its
 * own directory and no persistence, stopped by its PID. `.ci/run` installs the package.
 */
export async function startRedisServer(wantedPort?: number): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-redis-'));
  const port = wantedPort ?? (await freePort());
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) =>
      reject(new Error(`redis-server could not start (apt-get install -y redis-server): ${error.message}`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await spawned;
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error('redis-server did not accept connections within 10 s');
    }
    await new Promise((wake) => setTimeout(wake, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      process.kill(child.pid!, 'SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
