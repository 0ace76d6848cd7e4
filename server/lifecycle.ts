// One lifecycle for every long-running part of a server (job system, monitor, simulator, timers):
// the app starts them in order after its routes are registered and stops them in reverse before the
// store closes. A route plugin never starts or stops a service itself.
export interface Service {
  /** For logs and errors: which service failed to start or stop. */
  readonly name: string;
  start(): void | Promise<void>;
  /**
   * Optional: runs first in the app's close (fastify's preClose), before the server stops listening and
   * waits for in-flight requests, for work that talks to this server over HTTP (a simulator fleet).
   * stop() follows after the server closed.
   */
  drain?(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export class Services {
  private readonly list: Service[] = [];
  private started: Service[] = [];

  add<S extends Service>(service: S): S {
    if (this.list.some((s) => s.name === service.name)) throw new Error(`service "${service.name}" is registered twice`);
    this.list.push(service);
    return service;
  }

  get<S extends Service>(name: string): S | undefined {
    return this.list.find((s) => s.name === name) as S | undefined;
  }

  async startAll(): Promise<void> {
    for (const s of this.list) {
      if (this.started.includes(s)) continue;
      await s.start();
      this.started.push(s);
    }
  }

  /** Drains what was started, last first (see Service.drain); a failure is left to stop() to settle. */
  async drainAll(): Promise<void> {
    for (const s of [...this.started].reverse()) {
      try {
        await s.drain?.();
      } catch {
        /* stop() runs next and settles it */
      }
    }
  }

  /** Stops what was started, last first; one that fails to stop does not keep the others running. */
  async stopAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const s of this.started.reverse()) {
      try {
        await s.stop();
      } catch (err) {
        errors.push(err);
      }
    }
    this.started = [];
    if (errors.length) throw errors[0];
  }
}
