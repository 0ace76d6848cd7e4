// The domain's backend on the SQLite store (domain/backend.ts): ports that answer at once, units as
// the store's synchronous transactions, polls batched per event-loop turn (domain/dispatch-batch.ts),
// trace parts appended to the build's file by its only writer. Nothing to publish: this process is
// the only one using the store, and the domain emits its events after each commit.
import type { DomainBackend, DomainPorts, Publish } from '../../domain/backend.ts';
import { DispatchBatch } from '../../domain/dispatch-batch.ts';
import { andThen } from '../../domain/maybe-promise.ts';
import type { Store } from '../index.ts';

const unpublished: Publish = () => undefined;

export function sqliteDomainBackend(store: Store): DomainBackend {
  const ports: DomainPorts = store;
  const batch = new DispatchBatch(store);
  const { traces } = store;
  return {
    ports,
    unit: (fn) => store.tx(() => fn(ports, unpublished)),
    write: (fn) => store.tx(() => fn(ports)),
    dispatch: batch,
    traces: {
      length: (id) => traces.length(id),
      read: (id, start) => traces.read(id, start),
      release: (id) => traces.release(id),
      credentials: (id) => store.builds.credentials(id),
      append: (build, start, bytes) => traces.append(build.id, start, bytes),
      // One synchronous turn: the build the caller just found running is still running.
      replaceWhileRunning(id, bytes, then) {
        const replaced = traces.replace(id, bytes);
        if (!replaced.ok || !then) return replaced;
        return andThen(store.tx(() => then(ports, unpublished)), (kept) => (kept ? replaced : undefined));
      },
    },
    pollRunners: { get: () => undefined, remember: () => undefined },
    registrationToken: store.registrationToken,
  };
}
