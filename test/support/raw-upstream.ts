import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

/** A misbehaving upstream on 127.0.0.1 that counts what reached it. */
export interface RawUpstream {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** TCP connections accepted. */
  connections: number;
  /** HTTP requests received (for the TCP server: connections that sent bytes). */
  requests: number;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 that runs `handle` for each request once its body has been read. */
export async function httpUpstream(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<RawUpstream> {
  const server = createServer(async (req, res) => {
    upstream.requests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // The client may give up on a response (a bomb, a timeout): writing to it must not crash the test.
    res.on('error', () => {});
    handle(req, res, Buffer.concat(chunks).toString('utf8'));
  });
  server.on('connection', () => {
    upstream.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const upstream: RawUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: 0,
    requests: 0,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return upstream;
}

/** A raw TCP server on 127.0.0.1, for answers no HTTP server would give; `handle` runs on a connection's first bytes. */
export async function tcpUpstream(handle: (socket: Socket) => void): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    upstream.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => {
      upstream.requests++;
      handle(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const upstream: RawUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: 0,
    requests: 0,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return upstream;
}

/** A port on 127.0.0.1 that nothing listens on (it was bound a moment ago, then closed). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
