// A small HTTP server on loopback that records every request it receives (method, URL, raw header
// lines, body) and answers through a handler the test gives: the far side of outbound-call tests
// (a redirect to another origin, a foreign runner API), where what matters is what arrived.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  /** Header names and values as they came on the wire. */
  headers: [string, string][];
  body: string;
}

export interface RecordingServer {
  url: string;
  received: Received[];
  /** Every header line and body received, as one text: search it for a secret. */
  everything(): string;
  close(): Promise<void>;
}

export type Handler = (req: Received, res: http.ServerResponse) => void;

export async function recordingServer(handler: Handler, host = '127.0.0.1'): Promise<RecordingServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    received,
    everything: () => received.map((r) => `${r.method} ${r.url}\n${r.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${r.body}`).join('\n---\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON answer. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
