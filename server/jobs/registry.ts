// The job kinds this server can run, by name: what a job's `kind` resolves to when a worker takes it.
import type { JobKind } from './types.ts';

export class KindRegistry {
  private readonly kinds = new Map<string, JobKind>();

  register(name: string, def: JobKind): void {
    this.kinds.set(name, def);
  }

  get(name: string): JobKind | undefined {
    return this.kinds.get(name);
  }

  /** The kind registered for a class name (a job pushed by Sidekiq's client names only its class). */
  kindOfClass(cls: string): string | undefined {
    for (const [name, def] of this.kinds) if (def.class === cls) return name;
    return undefined;
  }

  /** Queues of Jobscope's own kinds: listed from the start, never deleted nor forgotten. */
  declaredQueues(): string[] {
    return [...this.kinds.values()].filter((d) => d.declare !== false).map((d) => d.queue);
  }

  isBuiltinQueue(name: string): boolean {
    for (const def of this.kinds.values()) if (def.declare !== false && def.queue === name) return true;
    return false;
  }
}
