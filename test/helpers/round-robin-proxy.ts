// A load balancer for tests of several instances on one database: each request goes to the next
// upstream in turn, bodies streamed both ways (a trace part or an artifact is never held whole).
// An upstream that refuses the connection (killed, not started) is skipped and the request goes to
// the next one: nothing of the request was sent, so that is safe for any method, as a real balancer
// retries a refused connect. A connection that breaks once the request is under way is NOT retried
// (the upstream may have acted on it): the client's socket is cut, and the client sees what it would
// see behind a real balancer when an instance dies mid-request.
import http from 'node:http';
import type net from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests sent to each upstream (by index), connect failures not counted. */
  served: number[];
  /** Connects refused, per upstream. */
  refused: number[];
  /** Requests cut because their upstream broke mid-way. */
  cut: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function forwardHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  const targets = upstreams.map((u) => new URL(u));
  let next = 0;
  const state = { served: targets.map(() => 0), refused: targets.map(() => 0), cut: 0 };
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    // The body waits until an upstream has accepted the connection, so a refused one loses none of it.
    req.pause();
    // The request's own turn, then the upstreams after it: a skip must not take the next request's turn,
    // or under load two skips in a row land on the same dead upstream.
    const first = next++;
    const attempt = (tried: number) => {
      if (tried >= targets.length) {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'no upstream accepted the connection' }));
        return;
      }
      const i = (first + tried) % targets.length;
      const t = targets[i]!;
      let connected = false;
      let cut = false;
      const cutOff = () => {
        if (cut) return;
        cut = true;
        state.cut++;
        res.destroy();
        req.destroy();
      };
      // A fresh connection per request: a kept-alive socket to a killed upstream would fail after the
      // body was handed to it, where a new connect fails before.
      const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: forwardHeaders(req.headers), agent: false });
      up.on('socket', (s) =>
        s.once('connect', () => {
          connected = true;
          state.served[i]!++;
          req.pipe(up);
          req.resume();
        }),
      );
      up.on('response', (r) => {
        res.writeHead(r.statusCode ?? 502, r.statusMessage, forwardHeaders(r.headers));
        r.pipe(res);
        r.on('error', cutOff);
        r.on('aborted', cutOff);
      });
      // The client gone before the answer: the upstream request goes too.
      res.on('close', () => {
        if (res.writableFinished || cut) return;
        cut = true;
        up.destroy();
      });
      up.on('error', () => {
        if (!connected) {
          state.refused[i]!++;
          attempt(tried + 1);
          return;
        }
        cutOff();
      });
    };
    attempt(0);
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get served() {
      return state.served;
    },
    get refused() {
      return state.refused;
    },
    get cut() {
      return state.cut;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
