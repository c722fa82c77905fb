// Hand-written: a proxy that can cut or stall the path to PostgreSQL on demand, which no test library offers.
import type { Socket } from 'node:net';
import { createServer, connect } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Forwards every connection to the target (the default). */
  forward(): void;
  /** A black-hole address: open connections are reset, new ones are accepted and never answered. */
  blackHole(): void;
  /** Open connections stay open but nothing more passes either way (a peer gone silent); new ones are forwarded. */
  stall(): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 that a test or a bench switches between forwarding and black-holing (a partition). */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let holding = false;
  const pairs = new Set<[Socket, Socket]>();
  const swallowed = new Set<Socket>();

  const server = createServer((client) => {
    client.on('error', () => undefined);
    if (holding) {
      swallowed.add(client);
      client.on('close', () => swallowed.delete(client));
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const forget = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', forget);
    upstream.on('close', forget);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const destroyAll = () => {
    for (const socket of swallowed) socket.destroy();
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
  };

  return {
    port: (server.address() as { port: number }).port,
    forward: () => {
      holding = false;
      for (const socket of swallowed) socket.destroy();
    },
    blackHole: () => {
      holding = true;
      destroyAll();
    },
    stall: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close: () =>
      new Promise((resolve) => {
        destroyAll();
        server.close(() => resolve());
      }),
  };
}
