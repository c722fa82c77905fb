import { createConnection, createServer, Server, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones, as a dead database host would. */
  cut(): Promise<void>;
  /** Accepts and forwards connections again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to `target`, that a test can cut to simulate an unreachable server. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const forward = (client: Socket) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  let server: Server = createServer(forward);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });

  const port = await listen(0);
  return {
    port,
    cut: stop,
    restore: async () => {
      server = createServer(forward);
      await listen(port);
    },
    close: stop,
  };
}
