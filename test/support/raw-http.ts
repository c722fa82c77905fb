import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body when it is JSON, else the text. */
  body: unknown;
  /** Whether the service closed the connection after the answer (or without one). */
  closed: boolean;
  /** Milliseconds from the first byte sent until the answer was complete or the connection closed. */
  elapsedMs: number;
}

/** An HTTP/1.1 request written by hand: what fetch and node:http refuse to send (repeated headers, no Host...). */
export function rawRequest(
  method: string,
  path: string,
  headers: [string, string][],
  body = '',
  { version = 'HTTP/1.1' } = {},
): string {
  const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${method} ${path} ${version}\r\n${lines}${length}\r\n${body}`;
}

function parse(raw: Buffer, closed: boolean, elapsedMs: number): RawResponse | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const length = Number(headers.get('content-length') ?? NaN);
  const bodyBytes = raw.subarray(end + 4);
  if (!closed && (Number.isNaN(length) || bodyBytes.length < length)) return undefined;
  const text = bodyBytes.subarray(0, Number.isNaN(length) ? undefined : length).toString('utf8');
  const body: unknown = headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text) : text;
  return { status: Number(statusLine.split(' ')[1]), headers, text, body, closed, elapsedMs };
}

/**
 * Opens a connection, writes `chunks` (a function may write them over time), and resolves with the first answer
 * once it is complete, or with `undefined` when the connection closes without one. Bounded by `timeoutMs`: past
 * it, it rejects. `waitForClose` also waits (within the bound) for the service to close the connection.
 */
export function exchange(
  origin: string,
  send: string | Buffer | ((socket: Socket) => void),
  { timeoutMs = 10_000, waitForClose = false } = {},
): Promise<RawResponse | undefined> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let answer: RawResponse | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no ${answer ? 'close' : 'answer'} within ${timeoutMs} ms: ${received.toString('latin1')}`));
    }, timeoutMs);
    const finish = (value: RawResponse | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    socket.on('connect', () => {
      if (typeof send === 'function') send(socket);
      else socket.write(send);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      answer ??= parse(received, false, Date.now() - started);
      if (answer && !waitForClose) finish(answer);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const final = parse(received, true, answer?.elapsedMs ?? Date.now() - started);
      finish(final && { ...final, elapsedMs: Date.now() - started });
    });
  });
}
