/**
 * An HTTP CONNECT proxy on 127.0.0.1 that records what it was asked. It tunnels only to
 * 127.0.0.1 (also under the name `service.ugs.test`, which only it resolves), or refuses every
 * CONNECT with 407 or 403; a request in absolute form (no tunnel) gets 501.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface TestProxy {
  url: string;
  /** The CONNECT targets asked for, in order. */
  connects: string[];
  /** Proxy-Authorization headers sent with each CONNECT. */
  authorizations: (string | undefined)[];
  /** Requests sent to the proxy in absolute form (no tunnel). */
  forwarded: string[];
  close(): Promise<void>;
}

/** `tunnel` pipes CONNECTs for HOST to 127.0.0.1 only; 407/403 refuse every CONNECT. */
export async function startProxy(mode: 'tunnel' | 407 | 403): Promise<TestProxy> {
  const connects: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const forwarded: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    forwarded.push(req.url ?? '');
    res.writeHead(501, { 'content-type': 'text/plain' });
    res.end('this test proxy only tunnels');
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    connects.push(target);
    authorizations.push(req.headers['proxy-authorization']);
    client.on('error', () => {});
    const refuse = (status: number, reason: string, extra = '') =>
      client.end(`HTTP/1.1 ${status} ${reason}\r\n${extra}Content-Length: 0\r\n\r\n`);
    if (mode === 407) {
      refuse(407, 'Proxy Authentication Required', 'Proxy-Authenticate: Basic realm="corp"\r\n');
      return;
    }
    if (mode === 403) return refuse(403, 'Forbidden');
    const match = /^(?:127\.0\.0\.1|service\.ugs\.test):(\d+)$/.exec(target);
    if (!match) return refuse(403, 'Forbidden'); // loopback only, whatever happens
    const upstream = connect(Number(match[1]), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    authorizations,
    forwarded,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}
