/**
 * The HTTP edge measured from outside (by hand, not in the test suite): the built service, with its defaults,
 * on a real PostgreSQL, probed as a hostile or careless client would.
 *
 *   npm run bench:edge
 *
 * Prints: the deepest body that fits the body limit, its answer and how long it takes; how long a body sent one
 * byte a second holds a socket; how many slow sockets one instance holds before MAX_CONNECTIONS and what the next
 * client sees; the ERROR lines after 100 clients hang up mid-body. With BENCH_DATABASE_URL set it uses that
 * database, else a throw-away embedded PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { startBenchDatabase } from './bench-database.js';
import { startService } from './server-process.js';

const BODY_LIMIT_BYTES = 16 * 1024;
const SAMPLES = 50;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Opens a connection and resolves once it is open, or rejects when it fails. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What arrives on the socket, and when it closes, after `started`. */
function watch(socket: Socket, started: number): Promise<{ received: string; closedAfterMs: number }> {
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return new Promise((resolve) =>
    socket.once('close', () => resolve({ received, closedAfterMs: performance.now() - started })),
  );
}

async function main(): Promise<void> {
  const database = await startBenchDatabase();
  const apiKey = randomBytes(24).toString('hex');
  const auth = { authorization: `Bearer ${apiKey}` };
  const server = await startService({ databaseUrl: database.url, apiKey });
  const { origin } = server;
  const port = Number(new URL(origin).port);
  const head = `Host: a\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n`;
  try {
    console.log(`Edge limits: built service (Node ${process.version}), defaults, pid ${server.pid}`);

    // 1. The deepest body within the body limit.
    const envelope = '{"name":"B","categoryId":1,"x":}';
    const levels = (BODY_LIMIT_BYTES - envelope.length) / 2;
    const deep = `{"name":"B","categoryId":1,"x":${'['.repeat(levels)}${']'.repeat(levels)}}`;
    const flat = JSON.stringify({ name: 'x'.repeat(BODY_LIMIT_BYTES - envelope.length + 3), categoryId: 1 });
    const timed = async (body: string) => {
      const timings: number[] = [];
      let status = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const started = performance.now();
        const response = await fetch(`${origin}/v1/pets`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body,
        });
        await response.text();
        timings.push(performance.now() - started);
        status = response.status;
      }
      return `${status}, median ${median(timings).toFixed(2)} ms over ${SAMPLES} (max ${Math.max(...timings).toFixed(2)} ms)`;
    };
    console.log(`deepest body in ${Buffer.byteLength(deep)} bytes: ${levels + 1} levels -> ${await timed(deep)}`);
    console.log(`for comparison, a flat body of ${Buffer.byteLength(flat)} bytes -> ${await timed(flat)}`);

    // 2. A body sent one byte a second.
    const slow = await open(port);
    const slowStarted = performance.now();
    const slowEnd = watch(slow, slowStarted);
    slow.write(`POST /v1/pets HTTP/1.1\r\n${head}Content-Length: 16000\r\n\r\n`);
    const drip = setInterval(() => slow.writable && slow.write(' '), 1_000);
    const { received, closedAfterMs } = await slowEnd;
    clearInterval(drip);
    console.log(
      `1 byte a second: socket held ${(closedAfterMs / 1000).toFixed(1)} s, answered ` +
        `${received.split('\r\n')[0] || '(nothing)'} ${received.slice(received.indexOf('\r\n\r\n') + 4)}`,
    );

    // 3. Slow sockets up to the cap, then the next client.
    const held: Socket[] = [];
    const cap = 4096;
    for (let i = 0; i < cap; i++) {
      const socket = await open(port);
      socket.on('error', () => undefined);
      socket.write(`POST /v1/pets HTTP/1.1\r\n${head}Content-Length: 16000\r\n\r\n`);
      held.push(socket);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stillOpen = held.filter((socket) => !socket.destroyed).length;
    const shedWith503 = held.filter((socket) =>
      (socket.read() as Buffer | null)?.toString('latin1').startsWith('HTTP/1.1 503'),
    ).length;
    const nextStarted = performance.now();
    const next = await open(port);
    const nextEnd = watch(next, nextStarted);
    next.write(`GET /v1/pets HTTP/1.1\r\n${head}\r\n`);
    const nextSaw = await Promise.race([
      nextEnd,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
    ]);
    console.log(
      `slow sockets held: ${stillOpen} of ${cap} opened (${shedWith503} of them answered 503 by load shedding, ` +
        `the others' bodies still awaited); the next client: ` +
        (nextSaw
          ? `connection closed after ${nextSaw.closedAfterMs.toFixed(1)} ms, ${nextSaw.received.length} bytes received`
          : 'still open after 5 s'),
    );
    next.destroy();
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = await fetch(`${origin}/v1/pets?limit=1`, { headers: auth });
    console.log(`once they close, a request is answered ${after.status}`);

    // 4. 100 clients hanging up mid-body.
    const logLines = () => readFileSync(server.logFile, 'utf8').split('\n').filter(Boolean);
    const errorsBefore = logLines().filter((line) => /"level":(50|60)/.test(line)).length;
    const abandonedBefore = logLines().filter((line) => line.includes('request abandoned')).length;
    for (let i = 0; i < 100; i++) {
      const socket = await open(port);
      const closed = watch(socket, performance.now());
      socket.write(`POST /v1/pets HTTP/1.1\r\n${head}Content-Length: 100\r\n\r\n{"name":`);
      setTimeout(() => socket.destroy(), 20);
      await closed;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const lines = logLines();
    const errors = lines.filter((line) => /"level":(50|60)/.test(line)).length - errorsBefore;
    const abandoned = lines.filter((line) => line.includes('request abandoned')).length - abandonedBefore;
    console.log(`100 client aborts: ${errors} ERROR lines, ${abandoned} info lines "request abandoned"`);
  } finally {
    await server.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
