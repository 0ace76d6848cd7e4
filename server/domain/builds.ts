// The build lifecycle: how a build is created, handed out, updated, finished and its trace and
// artifacts kept. Route handlers and jobs call these; they own the transactions, the events
// (build:pending, build:finished, artifacts:stored) and the trace release, so no caller can forget one.
import type { Readable } from 'node:stream';
import type { AppEvents } from '../events.ts';
import type { Store } from '../store/index.ts';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from '../store/ports/build.ts';
import type { Runner, RunnerInfo } from '../store/ports/runner.ts';
import type { AppendResult } from '../store/ports/trace.ts';
import type { StagedUpload } from '../store/ports/artifact.ts';
import type { ArchiveListing, ListingSummary } from '../store/ports/artifact.ts';
import { DispatchBatch, type Taken } from './dispatch-batch.ts';
import { canRetry, retryInput, type RetryResult } from './build-retry.ts';
import type { Loose } from './maybe-promise.ts';

export type UpdateResult =
  /** `Ci::Build.where(runner_id:).running.find(id)` found nothing: the runner hears 404. */
  | { ok: false; reason: 'not-found' }
  /** A trace was sent that is not text. */
  | { ok: false; reason: 'trace-invalid' }
  | { ok: false; reason: 'trace-too-large' }
  | { ok: true; build: Build };

/**
 * The PUT's answer once its state change was tried: the finished build, or — when another change
 * got there first (an admin's cancel, the runner's other PUT) — 404, what GitLab answers a build
 * that is no longer running. Both stores answer through this, so the loser of a race never gets a
 * 200 carrying the winner's status.
 */
export const finishAnswer = (finished: Build | undefined): UpdateResult => (finished ? { ok: true, build: finished } : { ok: false, reason: 'not-found' });

/**
 * A poll's answer when the runner it was given is no longer as given: PostgreSQL's, for a runner
 * from its cache (store/pg/runner-cache.ts) paused, deleted or edited on another instance. The
 * caller reads the runner again (RunnersDomain.byToken) and answers from that. SQLite never gives it:
 * its runners are read from the only writer's own store.
 */
export const RUNNER_CHANGED = Symbol('runner changed');

/** What handlers and jobs may ask of builds, on either store: the SQLite class's methods, each answer possibly a promise. */
export type BuildsDomain = Loose<SqliteBuildsDomain>;

/** The build rules over the synchronous SQLite ports: every answer at once (dispatch batches its polls, see poll). */
export class SqliteBuildsDomain {
  private readonly batch: DispatchBatch;

  constructor(
    private readonly store: Store,
    private readonly events: AppEvents,
  ) {
    this.batch = new DispatchBatch(store);
  }

  byId(id: number): Build | undefined {
    return this.store.builds.byId(id);
  }

  byIds(ids: number[]): Build[] {
    return this.store.builds.byIds(ids);
  }

  list(filter: BuildFilter = {}): Build[] {
    return this.store.builds.list(filter);
  }

  /** What the build-token endpoints authenticate against (cached while a build streams its trace). */
  credentials(id: number): BuildCredentials | undefined {
    return this.store.builds.credentials(id);
  }

  /** `count` pending builds of one input, all or none (a failure part-way stores none, so a retry cannot duplicate). */
  create(input: NewBuild, count: number): Build[] {
    const created = this.store.tx(() => Array.from({ length: count }, () => this.store.builds.create(input)));
    for (const b of created) this.events.emit('build:pending', b);
    return created;
  }

  /**
   * Records the runner's contact and, when `take`, hands it the oldest pending build it may take.
   * Polls of one event-loop turn share one transaction (dispatch-batch.ts).
   */
  poll(runner: Runner, info: RunnerInfo | undefined, take: boolean): Promise<Taken | undefined | typeof RUNNER_CHANGED> {
    return this.batch.poll(runner, info, take);
  }

  /**
   * The runner's PUT: contact first (also when the build is not its own), then the full trace when
   * sent, then the final state. Only a build running on this runner may be updated. `trace: null`:
   * one was sent that is not text.
   */
  update(runner: Runner, id: number | undefined, change: { info?: RunnerInfo; trace?: string | null; state?: string }): UpdateResult {
    this.store.runners.touch(runner, change.info);
    const build = id === undefined ? undefined : this.store.builds.byId(id);
    if (!build || build.runner_id !== runner.id || build.status !== 'running') return { ok: false, reason: 'not-found' };
    if (change.trace === null) return { ok: false, reason: 'trace-invalid' };
    if (change.trace !== undefined && !this.store.traces.replace(build.id, Buffer.from(change.trace, 'utf8')).ok) {
      return { ok: false, reason: 'trace-too-large' };
    }
    if (change.state === 'success' || change.state === 'failed') {
      return finishAnswer(this.finish(build.id, change.state));
    }
    return { ok: true, build };
  }

  /** running → success|failed; the finished build, or undefined when it was not running. */
  finish(id: number, status: 'success' | 'failed'): Build | undefined {
    return this.settle(id, () => this.store.builds.finish(id, status));
  }

  /** pending|running → canceled; the canceled build, or undefined when it was neither. */
  cancel(id: number): Build | undefined {
    return this.settle(id, () => this.store.builds.cancel(id));
  }

  /**
   * GitLab's retry: a new pending build of a finished build's definition (build-retry.ts); the old
   * one stays. Check and create run in one synchronous turn, so no status change slips between.
   */
  retry(id: number): RetryResult {
    const old = this.store.builds.byId(id);
    if (!old) return { ok: false, reason: 'not-found' };
    if (!canRetry(old)) return { ok: false, reason: 'not-finished', status: old.status };
    return { ok: true, build: this.create(retryInput(old), 1)[0]! };
  }

  /** Fails builds running past their timeout (the build's, else the project's); how many. */
  failStuck(now: number): number {
    let failed = 0;
    for (const build of this.store.builds.stuck(now)) if (this.finish(build.id, 'failed')) failed++;
    return failed;
  }

  /** The one way a build leaves pending/running: write, release its trace, re-read, tell everyone. */
  private settle(id: number, write: () => boolean): Build | undefined {
    if (!this.store.tx(write)) return undefined;
    this.store.traces.release(id);
    const done = this.store.builds.byId(id);
    if (done) this.events.emit('build:finished', done);
    return done;
  }

  /**
   * Appends a trace part at `start` (GitLab's incremental trace rule). Synchronous on purpose: the
   * trace PATCH is the hottest path and never waits; undefined when there is no such build.
   * `checked`: the build as the request's token was checked against it (not looked up again).
   */
  appendTrace(id: number, start: number, bytes: Buffer, checked?: BuildCredentials): { build: BuildCredentials; result: AppendResult } | undefined {
    const build = checked?.id === id ? checked : this.store.builds.credentials(id);
    if (!build) return undefined;
    return { build, result: this.store.traces.append(build.id, start, bytes) };
  }

  traceLength(id: number): number {
    return this.store.traces.length(id);
  }

  readTrace(id: number, start = 0): { body: Buffer | Readable | null; length: number } {
    return this.store.traces.read(id, start);
  }

  /** Streams an upload into a staging file; nothing is visible until storeArtifacts. */
  stageArtifacts(source: Readable): Promise<StagedUpload> {
    return this.store.artifacts.stage(source);
  }

  discardArtifacts(staged: StagedUpload): void {
    this.store.artifacts.discard(staged);
  }

  get maxArtifactBytes(): number {
    return this.store.artifacts.maxBytes;
  }

  /**
   * Makes a staged upload the build's archive: the file is in place before the row points at it,
   * the replaced archive goes after, and the listing job hears of it. The build as it is now.
   */
  async storeArtifacts(buildId: number, staged: StagedUpload, meta: { filename: string; expire_at: number | null }): Promise<Build> {
    const old = this.store.builds.byId(buildId)?.artifacts_key ?? null;
    let key: string;
    try {
      key = this.store.artifacts.commit(buildId, staged);
    } catch (err) {
      this.store.artifacts.discard(staged);
      throw err;
    }
    this.store.tx(() => this.store.builds.setArtifacts(buildId, { key, filename: meta.filename, size: staged.size, expire_at: meta.expire_at }));
    // The answer is the build as this upload left it, read before the await below: meanwhile the
    // expiry job may already erase an archive uploaded with `expire_in: 0` (the model test caught
    // a 201 without artifacts_file under load), and GitLab answers with what was stored.
    const stored = this.store.builds.byId(buildId)!;
    if (old && old !== key) await this.store.artifacts.removeAsync(old);
    this.events.emit('artifacts:stored', { buildId, key });
    return stored;
  }

  /** Erases the build's archive (the row forgets it first, so no reader is pointed at a missing file). */
  deleteArtifacts(build: Pick<Build, 'id' | 'artifacts_key'>): Build | undefined {
    if (build.artifacts_key) {
      this.store.tx(() => this.store.builds.clearArtifacts(build.id));
      this.store.artifacts.remove(build.artifacts_key);
    }
    return this.store.builds.byId(build.id);
  }

  /** Erases every archive whose expiry has passed at `now`; how many. */
  expireArtifacts(now: number): number {
    const expired = this.store.builds.expiredArtifacts(now);
    for (const build of expired) this.deleteArtifacts(build);
    return expired.length;
  }

  /** The archive's size on disk and a stream of it; throws when the file cannot be opened. */
  openArtifacts(key: string): { size: number; stream: Readable } {
    const size = this.store.artifacts.size(key);
    return { size, stream: this.store.artifacts.open(key) };
  }

  /** Where archive `key` is when it is still the build's current, unlisted one; undefined when there is nothing to list. */
  archiveToList(buildId: number, key: string): string | undefined {
    if (!this.isCurrentArchive(buildId, key)) return undefined;
    if (this.store.listings.summary(buildId)) return undefined;
    return this.store.artifacts.pathOf(key);
  }

  /** Whether `key` is still the build's archive (a newer upload or an expiry may have replaced it). */
  isCurrentArchive(buildId: number, key: string): boolean {
    return this.store.builds.byId(buildId)?.artifacts_key === key;
  }

  /** Stores the file list of archive `key`; false when the build's archive is no longer that one. */
  recordListing(buildId: number, key: string, listing: ArchiveListing): boolean {
    return this.store.tx(() => this.store.listings.set(buildId, key, listing));
  }

  /** Archives stored without a listing (their job was lost, or an older version kept none). */
  unlistedArchives(): { id: number; key: string }[] {
    return this.store.listings.unlisted();
  }

  listingSummary(buildId: number): ListingSummary | undefined {
    return this.store.listings.summary(buildId);
  }

  listing(buildId: number): ArchiveListing | undefined {
    return this.store.listings.get(buildId);
  }
}
