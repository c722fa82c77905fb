import { createServer, type RequestListener } from 'node:http';

/** An HTTP server on a free port of 127.0.0.1, answering with `listener`. */
export function listenLocally(listener: RequestListener): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createServer(listener);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
        close: () => new Promise((closed) => server.close(() => closed())),
      }),
    ),
  );
}
