// Keeps one server running for a host (serve, browser mode, Electron) and can restart it in place.
// "Reset data" is a restart on an emptied data dir rather than each service clearing its own
// memory: every cache, queue mirror and sampler starts from the store again, correct by construction.
import { buildServer, type JobscopeServer } from '../app.ts';
import type { Config } from '../config.ts';
import { wipeData } from '../store/wipe.ts';

export class ServerHost {
  private current: JobscopeServer | undefined;
  private url: string | undefined;
  private restarting: Promise<void> | undefined;

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
    try {
      this.url = await this.current.listen();
    } catch (err) {
      await this.current.close();
      this.current = undefined;
      throw err;
    }
    // Restarts must come back on the same address, so the UI and runners find it again.
    this.config = { ...this.config, port: Number(new URL(this.url).port) };
    return this.url;
  }

  /** Closes the server (in-flight requests finish), empties the data dir, starts again on the same port. */
  reset(): Promise<void> {
    this.restarting ??= (async () => {
      await this.current?.close();
      this.current = undefined;
      wipeData(this.config);
      const url = await this.start();
      this.onRestart(url);
    })().finally(() => {
      this.restarting = undefined;
    });
    return this.restarting;
  }

  async close(): Promise<void> {
    await this.restarting?.catch(() => {});
    await this.current?.close();
    this.current = undefined;
  }
}
