// How long a client may hold a connection without doing its part. Without limits, a crowd of
// sockets trickling headers or bodies (slow loris) kept them for ever and starved real runners.
// Headers get a flat deadline (node's headersTimeout). A body gets a progress rule instead of a
// total: a 100 MiB artifact on a slow link may take hours, and must, as long as it keeps coming.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';

type TimeoutConfig = Pick<Config, 'headersTimeoutMs' | 'bodyTimeoutMs' | 'bodyMinBytesPerS' | 'idleTimeoutMs' | 'keepAliveTimeoutMs'>;

/** How often deadlines are checked: a fraction of the shortest, so a test-sized one is enforced promptly. */
const checkEvery = (ms: number) => Math.min(1000, Math.max(25, Math.floor(ms / 4)));

/** The Fastify/node server options for the timeouts that node enforces itself. */
export function serverTimeoutOptions(config: TimeoutConfig): Pick<FastifyServerOptions, 'connectionTimeout' | 'keepAliveTimeout' | 'requestTimeout'> & { http: object } {
  return {
    // Socket inactivity (nothing read or written) while a request is open.
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // A flat total would kill a long upload that keeps sending; bodies get the progress rule below.
    requestTimeout: 0,
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: 0,
      // node checks headersTimeout on this period (30 s by default, coarser than the deadline itself).
      connectionsCheckingInterval: checkEvery(config.headersTimeoutMs),
    },
  };
}

/** The body a socket is carrying now: at most one per socket (HTTP/1.1 reads requests in turn). */
interface OpenBody {
  /** Null once the body is whole (or the socket gone): the record stays on the socket for its next request. */
  raw: IncomingMessage | null;
  res: ServerResponse | null;
  /** Start of the current window and the socket's bytes read then. */
  windowStart: number;
  readAtStart: number;
}

const kBody = Symbol('jobscope.openBody');
type WatchedSocket = Socket & { [kBody]?: OpenBody };

const hasBody = (raw: IncomingMessage) => raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;

/**
 * The body rule: in every window of --body-timeout-ms, a body still arriving must have sent at least
 * --body-min-bytes-per-s times the window (with a floor of 0, it must be whole by the first window's
 * end). A body that falls behind gets a 408 and its connection is closed. Bytes are counted on the
 * socket, so a body nobody reads (an early answer being drained) falls under the rule too.
 *
 * Watched per socket, not per request: a keep-alive socket's record is reused by its next request,
 * so a poll costs a few field writes (no allocation, no map insert, no onResponse hook), and what is
 * held is one request per open socket rather than every request of the last check period (holding
 * those, 10,000+ under a runner fleet, kept them alive into the old generation).
 */
export function installBodyProgress(app: FastifyInstance, config: TimeoutConfig): void {
  const window = config.bodyTimeoutMs;
  const minBytes = (config.bodyMinBytesPerS * window) / 1000;
  const watched = new Set<WatchedSocket>();
  const every = checkEvery(window);
  let timer: NodeJS.Timeout | undefined;
  let lastCheck = 0;

  const forget = (socket: WatchedSocket, body: OpenBody) => {
    watched.delete(socket);
    body.raw = null;
    body.res = null;
  };

  const check = () => {
    const now = Date.now();
    // A check that comes this late means the server itself did not run (its event loop blocked,
    // the process starved of CPU or stopped): what a client sent meanwhile waits unread in the
    // socket, and no check can run before the timers that are due, so the bytes counted say
    // nothing about the client. Every window starts again instead of judging anyone on it.
    const stalled = now - lastCheck > 2 * every;
    lastCheck = now;
    for (const socket of watched) {
      const body = socket[kBody]!;
      const raw = body.raw!;
      if (raw.complete || socket.destroyed) {
        forget(socket, body);
        continue;
      }
      if (stalled) {
        body.windowStart = now;
        body.readAtStart = socket.bytesRead;
        continue;
      }
      if (now - body.windowStart < window) continue;
      const got = socket.bytesRead - body.readAtStart;
      if (minBytes > 0 && got >= minBytes) {
        body.windowStart = now;
        body.readAtStart = socket.bytesRead;
        continue;
      }
      const res = body.res!;
      forget(socket, body);
      timeOut(raw, res, config);
    }
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (!raw.complete && hasBody(raw)) {
      const socket = raw.socket as WatchedSocket;
      let body = socket[kBody];
      if (body === undefined) body = socket[kBody] = { raw: null, res: null, windowStart: 0, readAtStart: 0 };
      if (body.raw === null) watched.add(socket);
      body.raw = raw;
      body.res = reply.raw;
      body.windowStart = Date.now();
      body.readAtStart = socket.bytesRead;
      if (timer === undefined) {
        lastCheck = Date.now();
        timer = setInterval(check, every).unref();
      }
    }
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    for (const socket of watched) forget(socket, socket[kBody]!);
    done();
  });
}

function timeOut(raw: IncomingMessage, res: ServerResponse, config: TimeoutConfig): void {
  const socket = raw.socket;
  if (res.headersSent || !socket.writable) {
    socket.destroy();
    return;
  }
  const rule = config.bodyMinBytesPerS > 0 ? `at least ${config.bodyMinBytesPerS} bytes/s over every ${config.bodyTimeoutMs} ms` : `whole within ${config.bodyTimeoutMs} ms`;
  const body = JSON.stringify({
    message: `408 Request Timeout - the request body must arrive ${rule} (--body-timeout-ms, --body-min-bytes-per-s)`,
  });
  // Written on the socket, as node answers its own timeouts: the route may still be waiting on this body.
  socket.end(
    `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
  // A client that reads nothing would hold the half-closed socket; it goes regardless.
  setTimeout(() => socket.destroy(), 1000).unref();
}
