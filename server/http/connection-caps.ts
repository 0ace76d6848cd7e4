// How many connections the server holds open: overall, and per client address. Without a cap, one
// client holding 19,990 half-sent requests filled the process's open-file limit (20,000): every other
// client's connection was refused by the kernel's accept, and a request on a connection already
// open failed too, as soon as it needed a file (a trace, the database). With the caps the flooding
// address is refused at accept, once it holds its share, and the files the server needs stay free.
//
// The defaults come from the open-file limit (RLIMIT_NOFILE). Node raises its soft limit to the hard
// one at start by itself (node.cc), so the soft limit read here already is the most this process can
// have; an operator raises it with `ulimit -Hn` (or LimitNOFILE= in a systemd unit) before the start.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.ts';

type CapConfig = Pick<Config, 'maxConnections' | 'maxConnectionsPerAddress'>;

/** Where no limit can be read (Windows has no per-process descriptor limit for sockets). */
const UNKNOWN_LIMIT = 16_384;

export interface ConnectionCaps {
  /** Open connections at most, all clients together. */
  total: number;
  /** Open connections at most from one client address. */
  perAddress: number;
  /** The soft RLIMIT_NOFILE the defaults were derived from; null when none could be read. */
  fileLimit: number | null;
}

/** This process's soft open-file limit, or null when there is none or it cannot be read. */
export function openFileLimit(): number | null {
  if (process.platform === 'linux') {
    try {
      const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
      const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
      return soft === undefined || soft === 'unlimited' ? null : Number(soft) || null;
    } catch {
      return null;
    }
  }
  if (process.platform === 'win32') return null;
  // Node has no getrlimit; a shell started from here inherits the limit and prints it (once, at start).
  const out = spawnSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2000 });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * The caps in force: the configured ones, or derived from the open-file limit. Overall: the limit
 * less a reserve for what the server opens itself (the database and its WAL, traces being written,
 * artifact uploads, log files, Redis and PostgreSQL connections, the monitor's connections): a tenth
 * of the limit, at least 256. Per address: a quarter of that, so no single client (or NAT) can take
 * more than a quarter of the server, and four must join to fill it.
 */
export function connectionCaps(config: CapConfig, fileLimit: number | null = openFileLimit()): ConnectionCaps {
  const limit = fileLimit ?? UNKNOWN_LIMIT;
  const derivedTotal = Math.max(64, limit - Math.max(256, Math.ceil(limit / 10)));
  const total = config.maxConnections > 0 ? config.maxConnections : derivedTotal;
  const perAddress = Math.min(total, config.maxConnectionsPerAddress > 0 ? config.maxConnectionsPerAddress : Math.max(16, Math.floor(total / 4)));
  return { total, perAddress, fileLimit };
}

const RETRY_AFTER_S = 5;
const REFUSAL = (() => {
  const body = JSON.stringify({ message: `503 Service Unavailable - this address holds as many connections as one client may (--max-connections-per-address); reuse an open connection (keep-alive) or close some, and retry in ${RETRY_AFTER_S} s` });
  return `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: ${RETRY_AFTER_S}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
})();

/** A burst of refusals ends after this long without one; its total is logged then. */
const QUIET_MS = 5000;

interface Log {
  warn(msg: string): void;
}

/**
 * Refusals are logged once per burst, not once per connection: a flood refused 15,000 times would
 * otherwise write 15,000 lines. The first refusal is logged at once; the burst's count, by address,
 * when it has been quiet for QUIET_MS.
 */
class RefusalLog {
  private byAddress = new Map<string, number>();
  private count = 0;
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Log,
    private readonly caps: ConnectionCaps,
  ) {}

  refused(address: string, why: 'address' | 'total'): void {
    this.count++;
    this.last = Date.now();
    // The addresses named are bounded too: a flood from many addresses would grow the map.
    if (this.byAddress.has(address) || this.byAddress.size < 10) this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    if (this.timer !== undefined) return;
    const rule = why === 'address' ? `${address} holds ${this.caps.perAddress} (--max-connections-per-address)` : `${this.caps.total} are open (--max-connections)`;
    this.log.warn(`refusing new connections: ${rule}; connections already open are still served; refusals are counted until ${QUIET_MS / 1000} s pass without one`);
    this.timer = setInterval(() => this.endIfQuiet(), QUIET_MS / 5).unref();
  }

  private endIfQuiet(): void {
    if (Date.now() - this.last < QUIET_MS) return;
    this.flush();
  }

  flush(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    const named = [...this.byAddress].map(([a, n]) => `${a} ×${n}`).join(', ');
    const rest = this.count - [...this.byAddress.values()].reduce((a, b) => a + b, 0);
    this.log.warn(`refused ${this.count} connections in that burst (${named}${rest > 0 ? `, others ×${rest}` : ''})`);
    this.count = 0;
    this.byAddress.clear();
  }
}

/**
 * Applies the caps to `server` before it listens. Overall: node's maxConnections, which closes an
 * accepted handle over it at once, before any JavaScript object is made for it ('drop'). Per address:
 * checked ahead of the HTTP server's own connection handling, so a refused socket is never parsed;
 * it gets a 503 with Retry-After (one write into an empty socket buffer) and is closed once written.
 */
export function installConnectionCaps(server: Server, caps: ConnectionCaps, log: Log): { close(): void } {
  const refusals = new RefusalLog(log, caps);
  server.maxConnections = caps.total;
  server.on('drop', (data?: { remoteAddress?: string }) => refusals.refused(data?.remoteAddress ?? 'unknown', 'total'));

  const open = new Map<string, number>();
  const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const held = open.get(address) ?? 0;
    if (held >= caps.perAddress) {
      refusals.refused(address, 'address');
      socket.on('error', () => undefined);
      socket.end(REFUSAL);
      // end() leaves the socket half-open until the client closes; a flooding client never does.
      socket.destroySoon();
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const n = open.get(address)! - 1;
      if (n === 0) open.delete(address);
      else open.set(address, n);
    });
    for (const handle of handlers) handle.call(server, socket);
  });
  return { close: () => refusals.flush() };
}
