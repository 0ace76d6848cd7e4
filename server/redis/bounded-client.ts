// What every ioredis client Jobscope makes shares (a sidekiq connection's, the --redis job
// backend's): a command timeout, so a frozen Redis fails a call instead of hanging it, and a
// connector whose socket passes each chunk through the reply scanner (reply-guard.ts) before
// ioredis's parser sees it, so one huge or hostile reply drops that connection only.
// Nothing here loads ioredis: its types only (loading it costs a server ~20 MiB of RSS).
import net from 'node:net';
import tls from 'node:tls';
import type { RedisOptions } from 'ioredis';
import type { Config } from '../config.ts';
import { ReplyScanner, ReplyTooLarge, type ReplyBounds } from './reply-guard.ts';

export { ReplyTooLarge, type ReplyBounds } from './reply-guard.ts';

export interface ClientBounds extends ReplyBounds {
  /** A command without its reply after this long fails ("Command timed out"), ms. */
  commandTimeoutMs: number;
}

/** The settings' defaults, for a client made without a Config (tests, benches). */
export const DEFAULT_CLIENT_BOUNDS: ClientBounds = { commandTimeoutMs: 5000, maxBytes: 64 * 2 ** 20, maxElements: 1_000_000 };

export const replyBoundsOf = (config: Pick<Config, 'redisMaxReplyBytes' | 'redisMaxReplyElements'>): ReplyBounds => ({
  maxBytes: config.redisMaxReplyBytes,
  maxElements: config.redisMaxReplyElements,
});

export const clientBoundsOf = (config: Pick<Config, 'redisMaxReplyBytes' | 'redisMaxReplyElements' | 'redisCommandTimeoutMs'>): ClientBounds => ({
  ...replyBoundsOf(config),
  commandTimeoutMs: config.redisCommandTimeoutMs,
});

/** Makes the socket's 'data' pass the scanner first; past a bound the socket is destroyed with the reason. */
export function guardReplies(socket: net.Socket, bounds: ReplyBounds, onRefused?: (err: ReplyTooLarge) => void): void {
  const scanner = new ReplyScanner(bounds);
  const emit = socket.emit;
  // Wrapping emit (not a 'data' listener) is what puts the check BEFORE ioredis's own listener:
  // listeners all run for a chunk, whatever the first one does.
  socket.emit = function guarded(this: net.Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data' && !socket.destroyed) {
      const refused = scanner.feed(args[0] as Uint8Array);
      if (refused) {
        onRefused?.(refused);
        socket.destroy(refused);
        return false;
      }
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof socket.emit;
}

interface ConnectOptions {
  path?: string;
  port?: number;
  host?: string;
  family?: number;
  tls?: tls.ConnectionOptions;
  disconnectTimeout?: number;
}

/**
 * ioredis's StandaloneConnector with the guard on its socket. Written out (30 lines) instead of
 * subclassing: that class is not exported from ioredis's entry point, and importing ioredis here
 * would load it on every server.
 */
function guardedConnector(bounds: ReplyBounds, onRefused?: (err: ReplyTooLarge) => void, lookup?: net.LookupFunction) {
  return class GuardedConnector {
    firstError?: Error;
    private connecting = false;
    private stream: net.Socket | null = null;

    constructor(private readonly options: ConnectOptions) {}

    check(): boolean {
      return true;
    }

    connect(): Promise<net.Socket> {
      this.connecting = true;
      const o = this.options;
      const where: net.NetConnectOpts = o.path ? { path: o.path } : { port: o.port ?? 6379, host: o.host, family: o.family, ...(lookup ? { lookup } : {}) };
      return new Promise((resolve, reject) => {
        // As ioredis: a disconnect() in the same tick as connect() wins.
        process.nextTick(() => {
          if (!this.connecting) return reject(new Error('Connection is closed.'));
          let s: net.Socket;
          try {
            s = o.tls ? tls.connect({ ...(where as tls.ConnectionOptions), ...o.tls }) : net.createConnection(where);
          } catch (err) {
            return reject(err as Error);
          }
          s.once('error', (err) => {
            this.firstError = err;
          });
          guardReplies(s, bounds, onRefused);
          this.stream = s;
          resolve(s);
        });
      });
    }

    disconnect(): void {
      this.connecting = false;
      const s = this.stream;
      if (!s) return;
      const timer = setTimeout(() => s.destroy(), this.options.disconnectTimeout ?? 2000);
      s.on('close', () => clearTimeout(timer));
      s.end();
    }
  };
}

/** `options` with the command timeout and the guarded connector. */
/**
 * `lookup`: how the socket resolves the host (the outbound policy's, which answers only addresses it
 * allows): the address connected to is the one checked, not a second answer of the same name.
 */
export function boundedOptions<T extends RedisOptions>(bounds: ClientBounds, options: T, onRefused?: (err: ReplyTooLarge) => void, lookup?: net.LookupFunction): T {
  return {
    ...options,
    commandTimeout: bounds.commandTimeoutMs,
    Connector: guardedConnector(bounds, onRefused, lookup) as unknown as RedisOptions['Connector'],
  };
}
