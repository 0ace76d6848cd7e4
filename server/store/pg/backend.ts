// The domain's backend on PostgreSQL (domain/backend.ts), for several instances sharing one database
// and one data folder. The rules are the domain's; what differs here is how:
// - Units: a transaction on one of the pool's clients whose changes are NOTIFYed inside it
//   (notify.ts), so other instances hear of them at its commit; a unit that makes builds pending
//   also moves X-GitLab-Last-Update's shared counter (runner-queue.ts) before it commits.
// - Dispatch: each poll takes its build with one FOR UPDATE SKIP LOCKED statement (take.ts), which
//   commits alone: exactly once across instances without the SQLite batch's one-thread argument;
//   the same statement reads X-GitLab-Last-Update's shared counter (QueueDispatch).
// - Traces: PgTraceStore, whose length in the database is the truth and whose row lock orders
//   parts of one build arriving at different instances.
// - No caches but the runners polls start from (runner-cache.ts) and the build credentials trace
//   parts are checked against (trace-credentials.ts): another instance may change any row at any
//   moment, and the poll statement and the append's lock check what may change against the row.
import type { Pool } from 'pg';
import { RUNNER_CHANGED, type BuildChange, type DomainBackend, type DomainPorts, type TraceWrites } from '../../domain/backend.ts';
import type { ArtifactsPort } from '../ports/ports.ts';
import type { Queryable } from './connect.ts';
import { PgBuilds } from './builds.ts';
import { PgRunners, contactWrite, contactWritten } from './runners.ts';
import { PgProjects } from './projects.ts';
import { PgUsers } from './users.ts';
import { PgListings } from './listings.ts';
import { mayTake, pollBuild } from './take.ts';
import type { PgTraceStore } from './traces.ts';
import type { PgChange, PgNotifyBridge } from './notify.ts';
import { RunnerCache } from './runner-cache.ts';
import { TraceCredentials } from './trace-credentials.ts';
import type { PgRunnerQueue } from './runner-queue.ts';

/** PostgreSQL's SQLSTATE for a row whose referenced row is gone. */
const FOREIGN_KEY_VIOLATION = '23503';

export interface PgBackendDeps {
  pool: Pool;
  notify: PgNotifyBridge;
  traces: PgTraceStore;
  /** The archive files (the shared data folder's); their rows are the builds row's (PgBuilds). */
  artifacts: ArtifactsPort;
  /** X-GitLab-Last-Update's shared counter, moved with each unit that makes builds pending. */
  runnerQueue: PgRunnerQueue;
  registrationToken: string;
}

const pgChange = ({ kind, build }: BuildChange): PgChange => ({ kind, buildId: build.id, projectId: build.project_id, status: build.status });

function portsOn(db: Queryable, artifacts: ArtifactsPort): DomainPorts {
  return { builds: new PgBuilds(db), runners: new PgRunners(db), projects: new PgProjects(db), users: new PgUsers(db), listings: new PgListings(db), artifacts };
}

export function pgDomainBackend(d: PgBackendDeps): DomainBackend {
  const ports = portsOn(d.pool, d.artifacts);
  const runnerCache = new RunnerCache();
  return {
    ports,
    async unit(fn) {
      const { out, counter } = await d.notify.transaction(d.pool, async (tx, changed) => {
        let pending = false;
        const result = await fn(portsOn(tx, d.artifacts), (c) => {
          pending ||= c.kind === 'build:pending';
          changed(pgChange(c));
        });
        return { out: result, counter: pending ? await d.runnerQueue.tick(tx) : undefined };
      });
      // Before the answer: a runner polling right after it must not be short-cut past these builds.
      if (counter !== undefined) d.runnerQueue.moved(counter);
      return out;
    },
    // A single statement commits alone.
    write: (fn) => fn(ports),
    dispatch: {
      /**
       * Contact, X-GitLab-Last-Update's shared counter and the take in one statement (take.ts
       * pollBuild), which commits alone: polls on any instance run side by side. The statement
       * checks the runner against its row right before it chooses a build, as the SQLite batch
       * does, for a pause, a delete or an edit in between (on any instance), and takes only when
       * the runner's last_update is not the counter it reads. One round trip for a runner from the
       * cache, two with the lookup. A cached runner that fails the check, or that may not take
       * (nothing would check it), is RUNNER_CHANGED: the caller reads it again.
       */
      async pollSeen(runner, info, lastUpdate) {
        const cached = runnerCache.has(runner);
        if (cached && !mayTake(runner)) {
          runnerCache.forget(runner);
          return RUNNER_CHANGED;
        }
        const contact = contactWrite(runner, info);
        const outcome = await pollBuild(d.pool, runner, contact, true, d.runnerQueue.seen(lastUpdate));
        const answered = d.runnerQueue.answered(outcome.counter ?? 0);
        if (!outcome.runnerOk) {
          runnerCache.forget(runner);
          return cached ? RUNNER_CHANGED : { lastUpdate: answered };
        }
        if (contact) contactWritten(runner, contact);
        return { taken: outcome.taken, lastUpdate: answered };
      },
    },
    traces: pgTraceWrites(d, ports.builds),
    pollRunners: runnerCache,
    registrationToken: d.registrationToken,
  };
}

/** `builds`: the backend's own builds port over the pool, which reads the credentials kept here. */
function pgTraceWrites(d: PgBackendDeps, builds: DomainPorts['builds']): TraceWrites {
  const { traces } = d;
  const running = `SELECT 1 FROM builds WHERE id = $1 AND status = 'running' FOR SHARE`;
  const kept = new TraceCredentials(async (id) => builds.credentials(id));
  return {
    length: (id) => traces.length(id),
    read: (id, start) => traces.read(id, start),
    release: (id) => traces.release(id),
    credentials: (id) => kept.get(id),
    async append(build, start, bytes) {
      try {
        // The status as the lock read it: `build` may be this instance's kept credentials (trace-credentials.ts).
        const { result, status } = await traces.appendWithStatus(build.id, start, bytes);
        // A part after its build finished (it still lands, as GitLab kept it): no handle kept for a next one.
        if (status !== 'running') await traces.release(build.id);
        return { ...result, status };
      } catch (err) {
        // The build was deleted after it was looked up (its trace row goes with it, and a first
        // append's row can no longer be made): no such build, as a lookup now would say.
        if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return undefined;
        throw err;
      }
    },
    // The trace row is locked for the whole unit; without `then` the build only has to stay running
    // until the trace commits (a cancel waits on the shared row lock).
    replaceWhileRunning: (id, bytes, then) =>
      traces.replaceIf(id, bytes, async (tx) => {
        if (!then) return (await tx.query(running, [id])).rowCount === 1;
        return then(portsOn(tx, d.artifacts), (c) => d.notify.notify(tx, pgChange(c)));
      }),
  };
}
