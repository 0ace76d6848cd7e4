// How long a client may hold a connection without doing its part. Without limits, a crowd of
// sockets trickling headers or bodies (slow loris) kept them for ever and starved real runners.
// Headers get a flat deadline (node's headersTimeout). A body gets a progress rule instead of a
// total: a 100 MiB artifact on a slow link may take hours, and must, as long as it keeps coming.
import type { IncomingMessage, ServerResponse } from 'node:http';
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

interface OpenBody {
  res: ServerResponse;
  /** Start of the current window and the socket's bytes read then. */
  windowStart: number;
  readAtStart: number;
}

const hasBody = (raw: IncomingMessage) => raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;

/**
 * The body rule: in every window of --body-timeout-ms, a body still arriving must have sent at least
 * --body-min-bytes-per-s times the window (with a floor of 0, it must be whole by the first window's
 * end). A body that falls behind gets a 408 and its connection is closed. Bytes are counted on the
 * socket, so a body nobody reads (an early answer being drained) falls under the rule too.
 */
export function installBodyProgress(app: FastifyInstance, config: TimeoutConfig): void {
  const window = config.bodyTimeoutMs;
  const minBytes = (config.bodyMinBytesPerS * window) / 1000;
  const open = new Map<IncomingMessage, OpenBody>();
  let timer: NodeJS.Timeout | undefined;

  const check = () => {
    const now = Date.now();
    for (const [raw, body] of open) {
      const socket = raw.socket;
      if (raw.complete || socket.destroyed) {
        open.delete(raw);
        continue;
      }
      if (now - body.windowStart < window) continue;
      const got = socket.bytesRead - body.readAtStart;
      if (minBytes > 0 && got >= minBytes) {
        body.windowStart = now;
        body.readAtStart = socket.bytesRead;
        continue;
      }
      open.delete(raw);
      timeOut(raw, body.res, config);
    }
    if (open.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (!raw.complete && hasBody(raw)) {
      open.set(raw, { res: reply.raw, windowStart: Date.now(), readAtStart: raw.socket.bytesRead });
      timer ??= setInterval(check, checkEvery(window)).unref();
    }
    done();
  });
  // A body read whole is out of the rule's reach at once, not at the next check: holding every
  // request of the last second (10,000+ under a runner fleet) kept them alive into the old
  // generation, and the trace path ran at 0.5x its bare reference instead of 0.85x.
  app.addHook('onResponse', (request, _reply, done) => {
    if (request.raw.complete) open.delete(request.raw);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    open.clear();
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
