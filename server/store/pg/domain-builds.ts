// The build rules of server/domain/builds.ts on PostgreSQL, for several instances sharing one
// database and one data folder (issue 13). Same answers as the SQLite domain; what differs is how:
// - Dispatch: each poll takes its build with one FOR UPDATE SKIP LOCKED statement (take.ts), which
//   commits alone: exactly once across instances without the SQLite batch's one-thread argument.
// - Traces: PgTraceStore, whose length in the database is the truth and whose row lock orders
//   parts of one build arriving at different instances.
// - Events: a change that others must hear (a build made pending, a build finished) is notified in
//   the transaction that makes it (notify.ts), and emitted here in-process after its commit, as the
//   SQLite domain emits. domain.ts re-emits what other instances notify.
// - No caches: another instance may change any row at any moment (see pg/builds.ts, pg/runners.ts).
import type { Readable } from 'node:stream';
import type { Pool } from 'pg';
import type { AppEvents } from '../../events.ts';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from '../ports/build.ts';
import type { Runner, RunnerInfo } from '../ports/runner.ts';
import type { AppendResult } from '../ports/trace.ts';
import type { StagedUpload } from '../ports/artifact.ts';
import type { ArchiveListing, ListingSummary } from '../ports/artifact.ts';
import type { ArtifactsPort } from '../ports/ports.ts';
import { RUNNER_CHANGED, finishAnswer, type BuildsDomain, type UpdateResult } from '../../domain/builds.ts';
import type { Taken } from '../../domain/dispatch-batch.ts';
import { canRetry, retryInput, type RetryResult } from '../../domain/build-retry.ts';
import { PgBuilds } from './builds.ts';
import { PgRunners, contactWrite, contactWritten } from './runners.ts';
import { mayTake, pollBuild } from './take.ts';
import { PgListings } from './listings.ts';
import type { PgTraceStore } from './traces.ts';
import type { PgNotifyBridge } from './notify.ts';
import type { RunnerCache } from './runner-cache.ts';
import type { PgRunnerQueue } from './runner-queue.ts';

/** PostgreSQL's SQLSTATE for a row whose referenced row is gone. */
const FOREIGN_KEY_VIOLATION = '23503';

export interface PgBuildsDeps {
  pool: Pool;
  notify: PgNotifyBridge;
  events: AppEvents;
  traces: PgTraceStore;
  /** The archive files (the shared data folder's); their rows are the builds row's (PgBuilds). */
  artifacts: ArtifactsPort;
  /** The runners domain's: a poll checks what it holds and drops what changed. */
  runnerCache: RunnerCache;
  /** X-GitLab-Last-Update's shared counter, moved with each create. */
  runnerQueue: PgRunnerQueue;
}

export class PgBuildsDomain implements BuildsDomain {
  private readonly builds: PgBuilds;
  private readonly runners: PgRunners;
  private readonly listings: PgListings;

  constructor(private readonly d: PgBuildsDeps) {
    this.builds = new PgBuilds(d.pool);
    this.runners = new PgRunners(d.pool);
    this.listings = new PgListings(d.pool);
  }

  byId(id: number): Promise<Build | undefined> {
    return this.builds.byId(id);
  }

  byIds(ids: number[]): Promise<Build[]> {
    return this.builds.byIds(ids);
  }

  list(filter: BuildFilter = {}): Promise<Build[]> {
    return this.builds.list(filter);
  }

  credentials(id: number): Promise<BuildCredentials | undefined> {
    return this.builds.credentials(id);
  }

  /** All or none, in one transaction whose commit also delivers each build's `build:pending` to the other instances. */
  async create(input: NewBuild, count: number): Promise<Build[]> {
    const { created, counter } = await this.d.notify.transaction(this.d.pool, async (tx, changed) => {
      const out = await new PgBuilds(tx).createMany(input, count);
      for (const b of out) changed({ kind: 'build:pending', buildId: b.id, projectId: b.project_id, status: b.status });
      return { created: out, counter: await this.d.runnerQueue.tick(tx) };
    });
    // Before the answer: a runner polling right after it must not be short-cut past these builds.
    this.d.runnerQueue.moved(counter);
    for (const b of created) this.d.events.emit('build:pending', b);
    return created;
  }

  /**
   * Contact and the take in one statement (take.ts pollBuild), which commits alone: polls on any
   * instance run side by side. The statement checks the runner against its row right before it
   * chooses a build, as the SQLite batch does, for a pause, a delete or an edit in between (on any
   * instance). One round trip for a runner from the cache (runner-cache.ts), two with the lookup.
   * A cached runner that fails the check, or that would not take (nothing would check it), is
   * RUNNER_CHANGED: the caller reads it again.
   */
  async poll(runner: Runner, info: RunnerInfo | undefined, take: boolean): Promise<Taken | undefined | typeof RUNNER_CHANGED> {
    const cached = this.d.runnerCache.has(runner);
    if (cached && (!take || !mayTake(runner))) {
      this.d.runnerCache.forget(runner);
      return RUNNER_CHANGED;
    }
    const contact = contactWrite(runner, info);
    const outcome = await pollBuild(this.d.pool, runner, contact, take);
    if (!outcome.runnerOk) {
      this.d.runnerCache.forget(runner);
      return cached ? RUNNER_CHANGED : undefined;
    }
    if (contact) contactWritten(runner, contact);
    return outcome.taken;
  }

  async update(runner: Runner, id: number | undefined, change: { info?: RunnerInfo; trace?: string | null; state?: string }): Promise<UpdateResult> {
    await this.runners.touch(runner, change.info);
    const build = id === undefined ? undefined : await this.builds.byId(id);
    if (!build || build.runner_id !== runner.id || build.status !== 'running') return { ok: false, reason: 'not-found' };
    if (change.trace === null) return { ok: false, reason: 'trace-invalid' };
    const state = change.state === 'success' || change.state === 'failed' ? change.state : undefined;
    // The finish is one UPDATE … WHERE status = 'running' (PgBuilds.finish): of a PUT and a cancel,
    // or two PUTs, on any instances, exactly one changes the row; the other is answered 404.
    if (change.trace === undefined) return state ? finishAnswer(await this.finish(build.id, state)) : { ok: true, build };
    return this.replaceTrace(build, Buffer.from(change.trace, 'utf8'), state);
  }

  /**
   * The PUT's full trace, and its final state when given, in one transaction conditional on the
   * build still running: the PUT that loses a race (to a cancel, to the runner's other PUT) leaves
   * neither its trace nor its state, as on SQLite, whose PUT runs in one synchronous turn.
   */
  private async replaceTrace(build: Build, trace: Buffer, state: 'success' | 'failed' | undefined): Promise<UpdateResult> {
    let finished: Build | undefined;
    const running = `SELECT 1 FROM builds WHERE id = $1 AND status = 'running' FOR SHARE`;
    const stored = await this.d.traces.replaceIf(build.id, trace, async (tx) => {
      // Without a state the build only has to stay running until the trace commits (a cancel waits).
      if (!state) return (await tx.query(running, [build.id])).rowCount === 1;
      const builds = new PgBuilds(tx);
      if (!(await builds.finish(build.id, state))) return false;
      finished = await builds.byId(build.id);
      if (finished) await this.d.notify.notify(tx, { kind: 'build:finished', buildId: finished.id, projectId: finished.project_id, status: finished.status });
      return true;
    });
    if (!stored) return { ok: false, reason: 'not-found' };
    if (!stored.ok) return { ok: false, reason: 'trace-too-large' };
    if (!state) return { ok: true, build };
    await this.d.traces.release(build.id);
    if (finished) this.d.events.emit('build:finished', finished);
    return finishAnswer(finished);
  }

  finish(id: number, status: 'success' | 'failed'): Promise<Build | undefined> {
    return this.settle(id, (b) => b.finish(id, status));
  }

  cancel(id: number): Promise<Build | undefined> {
    return this.settle(id, (b) => b.cancel(id));
  }

  /** A finished build never runs again, so the check and the create need no shared transaction. */
  async retry(id: number): Promise<RetryResult> {
    const old = await this.builds.byId(id);
    if (!old) return { ok: false, reason: 'not-found' };
    if (!canRetry(old)) return { ok: false, reason: 'not-finished', status: old.status };
    return { ok: true, build: (await this.create(retryInput(old), 1))[0]! };
  }

  /** Each one's finish is conditional on `running`: instances sweeping at once fail each build once. */
  async failStuck(now: number): Promise<number> {
    let failed = 0;
    for (const build of await this.builds.stuck(now)) if (await this.finish(build.id, 'failed')) failed++;
    return failed;
  }

  /** Write, re-read and notify in one transaction (others hear it at its commit), then tell this instance. */
  private async settle(id: number, write: (builds: PgBuilds) => Promise<boolean>): Promise<Build | undefined> {
    const done = await this.d.notify.transaction(this.d.pool, async (tx, changed) => {
      const builds = new PgBuilds(tx);
      if (!(await write(builds))) return undefined;
      const b = await builds.byId(id);
      if (b) changed({ kind: 'build:finished', buildId: b.id, projectId: b.project_id, status: b.status });
      return b;
    });
    // The append handle this instance kept; another instance's is closed when it hears of the finish (domain.ts).
    await this.d.traces.release(id);
    if (done) this.d.events.emit('build:finished', done);
    return done;
  }

  /** `checked`: the build as the request's token was checked against it, one query fewer a part. */
  async appendTrace(id: number, start: number, bytes: Buffer, checked?: BuildCredentials): Promise<{ build: BuildCredentials; result: AppendResult } | undefined> {
    const build = checked?.id === id ? checked : await this.builds.credentials(id);
    if (!build) return undefined;
    try {
      const result = await this.d.traces.append(build.id, start, bytes);
      // A part after its build finished (it still lands, as GitLab kept it): no handle kept for a next one.
      if (build.status !== 'running') await this.d.traces.release(build.id);
      return { build, result };
    } catch (err) {
      // The build was deleted after it was looked up (its trace row goes with it, and a first
      // append's row can no longer be made): no such build, as a lookup now would say.
      if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) return undefined;
      throw err;
    }
  }

  traceLength(id: number): Promise<number> {
    return this.d.traces.length(id);
  }

  readTrace(id: number, start = 0): Promise<{ body: Buffer | Readable | null; length: number }> {
    return this.d.traces.read(id, start);
  }

  stageArtifacts(source: Readable): Promise<StagedUpload> {
    return this.d.artifacts.stage(source);
  }

  discardArtifacts(staged: StagedUpload): void {
    this.d.artifacts.discard(staged);
  }

  get maxArtifactBytes(): number {
    return this.d.artifacts.maxBytes;
  }

  /** As the SQLite domain: the file in place before the row points at it, the replaced archive removed after. */
  async storeArtifacts(buildId: number, staged: StagedUpload, meta: { filename: string; expire_at: number | null }): Promise<Build> {
    const old = (await this.builds.byId(buildId))?.artifacts_key ?? null;
    let key: string;
    try {
      key = this.d.artifacts.commit(buildId, staged);
    } catch (err) {
      this.d.artifacts.discard(staged);
      throw err;
    }
    await this.builds.setArtifacts(buildId, { key, filename: meta.filename, size: staged.size, expire_at: meta.expire_at });
    // Read before the replaced archive's removal, as the SQLite domain does: the answer is what this upload stored.
    const stored = (await this.builds.byId(buildId))!;
    if (old && old !== key) await this.d.artifacts.removeAsync(old);
    // In-process only: the listing job it triggers is this instance's, and must run once.
    this.d.events.emit('artifacts:stored', { buildId, key });
    return stored;
  }

  async deleteArtifacts(build: Pick<Build, 'id' | 'artifacts_key'>): Promise<Build | undefined> {
    if (build.artifacts_key) {
      await this.builds.clearArtifacts(build.id);
      this.d.artifacts.remove(build.artifacts_key);
    }
    return this.builds.byId(build.id);
  }

  async expireArtifacts(now: number): Promise<number> {
    const expired = await this.builds.expiredArtifacts(now);
    for (const build of expired) await this.deleteArtifacts(build);
    return expired.length;
  }

  openArtifacts(key: string): { size: number; stream: Readable } {
    const size = this.d.artifacts.size(key);
    return { size, stream: this.d.artifacts.open(key) };
  }

  async archiveToList(buildId: number, key: string): Promise<string | undefined> {
    if (!(await this.isCurrentArchive(buildId, key))) return undefined;
    if (await this.listings.summary(buildId)) return undefined;
    return this.d.artifacts.pathOf(key);
  }

  async isCurrentArchive(buildId: number, key: string): Promise<boolean> {
    return (await this.builds.byId(buildId))?.artifacts_key === key;
  }

  recordListing(buildId: number, key: string, listing: ArchiveListing): Promise<boolean> {
    return this.listings.set(buildId, key, listing);
  }

  unlistedArchives(): Promise<{ id: number; key: string }[]> {
    return this.listings.unlisted();
  }

  listingSummary(buildId: number): Promise<ListingSummary | undefined> {
    return this.listings.summary(buildId);
  }

  listing(buildId: number): Promise<ArchiveListing | undefined> {
    return this.listings.get(buildId);
  }
}
