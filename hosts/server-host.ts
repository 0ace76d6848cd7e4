// Keeps one server running for a host (serve, browser mode, Electron) and can restart it in place.
// "Reset data" is a restart on an emptied data dir rather than each service clearing its own
// memory: every cache, queue mirror and sampler starts from the store again, correct by construction.
import type { Socket } from 'node:net';
import { buildServer, type JobscopeServer } from '../server/app.ts';
import type { Config } from '../server/config.ts';
import { wipeData } from '../server/store/sqlite/wipe.ts';
import { endStartUp } from './v8-flags.js';

export class ServerHost {
  private current: JobscopeServer | undefined;
  private url: string | undefined;
  private restarting: Promise<void> | undefined;
  /** The current server's open connections (see reset()). */
  private sockets = new Set<Socket>();

  constructor(
    private config: Config,
    private readonly onRestart: (url: string) => void = () => {},
  ) {}

  get server(): JobscopeServer {
    if (!this.current) throw new Error('server not started');
    return this.current;
  }

  async start(): Promise<string> {
    const { database } = this.config;
    this.current = await buildServer(this.config, database === undefined ? {} : { database });
    // On a database shared with other instances an emptied data dir would empty nothing there and
    // take the traces and artifacts from under the others: no reset (the API answers 409).
    if (database === undefined) this.current.ctx.requestReset = () => this.reset();
    const sockets = this.sockets;
    this.current.app.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    try {
      this.url = await this.current.listen();
    } catch (err) {
      await this.current.close();
      this.current = undefined;
      throw err;
    }
    // Restarts must come back on the same address, so the UI and runners find it again.
    this.config = { ...this.config, port: Number(new URL(this.url).port) };
    // After the validators' warm-up, which listen() queued before this (setImmediate runs in order):
    // start-up's allocations are done, so V8's young generation may grow under load (v8-tuning.ts).
    // Once per process (endStartUp ignores a restart's call), for every host that starts a server here.
    setImmediate(endStartUp);
    return this.url;
  }

  /** Closes the server (in-flight requests finish), empties the data dir, starts again on the same port. */
  reset(): Promise<void> {
    this.restarting ??= (async () => {
      await this.current?.close();
      this.current = undefined;
      await this.connectionsClosed();
      wipeData(this.config);
      const url = await this.start();
      this.onRestart(url);
    })().finally(() => {
      this.restarting = undefined;
    });
    return this.restarting;
  }

  /**
   * The closed server has destroyed its keep-alive connections, but a client in this same process (a
   * test, the simulator's runners in the desktop app) reads their end only in a later poll of the
   * event loop, and a start is mostly synchronous work and microtasks that never reach one: the new
   * server would be listening, its restart announced, with the client still holding the old sockets,
   * and its next request on one met the old server's close ("other side closed"). So: wait for
   * their 'close' (the stream's `closed` flag is set earlier, at destroy), then for a setImmediate,
   * which runs after the next poll, where such a client sees them hang up.
   */
  private async connectionsClosed(): Promise<void> {
    const open = [...this.sockets];
    this.sockets = new Set();
    await Promise.all(open.map((s) => new Promise((resolve) => s.once('close', resolve))));
    await new Promise((resolve) => setImmediate(resolve));
  }

  async close(): Promise<void> {
    await this.restarting?.catch(() => {});
    await this.current?.close();
    this.current = undefined;
  }
}
