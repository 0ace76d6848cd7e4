// The build lifecycle: how a build is created, handed out, updated, finished and its trace and
// artifacts kept. Route handlers and jobs call these; they own the transactions, the events
// (build:pending, build:finished, artifacts:stored) and the trace release, so no caller can forget one.
import type { Readable } from 'node:stream';
import type { AppEvents } from '../events.ts';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from '../store/ports/build.ts';
import type { Runner, RunnerInfo } from '../store/ports/runner.ts';
import type { AppendResult } from '../store/ports/trace.ts';
import type { ArchiveListing, ListingSummary, StagedUpload } from '../store/ports/artifact.ts';
import { canRetry, retryInput, type RetryResult } from './build-retry.ts';
import { allOf, andThen, inOrder, isPromise, type Loose, type MaybePromise } from './maybe-promise.ts';
import type { RunnersDomain } from './runners.ts';
import { RUNNER_CHANGED, type Dispatch, type DomainBackend, type DomainPorts, type Publish, type SeenPoll } from './backend.ts';

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

/** What handlers and jobs may ask of builds: every answer at once on SQLite, possibly a promise on PostgreSQL. */
export type BuildsDomain = Loose<BuildRules>;

/**
 * The build rules, once, over a backend's ports and strategies (backend.ts). Written with andThen,
 * not await: over SQLite's ports every step answers at once, so a check and the write after it stay
 * in one synchronous turn and no other request's work slips between.
 */
export class BuildRules {
  private readonly p: DomainPorts;
  /**
   * When this server last received a trace part or an update for each running build. Kept in memory
   * on purpose: the trace PATCH path writes no row (store/files/traces.ts), and a live runner sends
   * a part at least every 30 s (its ForceTraceSentInterval), so after a restart the next part
   * restores it.
   */
  private readonly heard = new Map<number, number>();

  constructor(
    private readonly b: DomainBackend,
    private readonly events: AppEvents,
    /** Where a poll's runner is read (RunnerRules: on PostgreSQL through the runners polls start from). */
    private readonly runners: Pick<RunnersDomain, 'byToken' | 'byTokenForPoll'>,
  ) {
    this.p = b.ports;
  }

  byId(id: number): MaybePromise<Build | undefined> {
    return this.p.builds.byId(id);
  }

  byIds(ids: number[]): MaybePromise<Build[]> {
    return this.p.builds.byIds(ids);
  }

  list(filter: BuildFilter = {}): MaybePromise<Build[]> {
    return this.p.builds.list(filter);
  }

  /** What the build-token endpoints authenticate against (cached while a build streams its trace). */
  credentials(id: number): MaybePromise<BuildCredentials | undefined> {
    return this.p.builds.credentials(id);
  }

  /** `count` pending builds of one input, all or none (a failure part-way stores none, so a retry cannot duplicate). */
  create(input: NewBuild, count: number): MaybePromise<Build[]> {
    const created = this.b.unit((p, publish) =>
      andThen(p.builds.createMany(input, count), (out) => andThen(allOf(out.map((build) => publish({ kind: 'build:pending', build }))), () => out)),
    );
    return andThen(created, (out) => {
      for (const b of out) this.events.emit('build:pending', b);
      return out;
    });
  }

  /**
   * A runner's poll by its token: records its contact and hands it the oldest pending build it may
   * take (the backend's dispatch: SQLite batches the polls of one event-loop turn in one
   * transaction), unless its `lastUpdate` is the runner queue's value (GitLab's 204 short cut: it
   * already saw this queue state). `admit` judges the runner found, throwing the caller's answer for
   * one it refuses. The answer carries the queue's value as read before the take (`current` here,
   * the store's own in the take's statement on PostgreSQL): a build made pending after that moves
   * the value past the one answered, so the runner's next poll looks again. On PostgreSQL the first
   * attempt may start from the runner this instance read last; when the poll finds that runner
   * changed, it is read again and judged anew.
   */
  async pollAs(token: string, info: RunnerInfo | undefined, seen: QueueSeen, admit: (found: Runner | undefined) => Runner): Promise<SeenPoll> {
    const { dispatch } = this.b;
    const poll = 'pollSeen' in dispatch ? (runner: Runner) => dispatch.pollSeen(runner, info, seen.lastUpdate) : pollAfterReading(dispatch, info, seen);
    for (let cached = true; ; cached = false) {
      // Awaited only when it is a promise: on SQLite an await of a plain value cost a promise and a
      // microtask turn per poll, for work already done.
      const found = cached ? this.runners.byTokenForPoll(token) : this.runners.byToken(token);
      const answer = await poll(admit(isPromise(found) ? await found : found));
      if (answer !== RUNNER_CHANGED) return answer;
      // A runner just read is never answered as changed (only a cached one is): no second try.
      if (!cached) return { lastUpdate: seen.current() };
    }
  }

  /**
   * The runner's PUT: contact first (also when the build is not its own), then the full trace when
   * sent, then the final state. Only a build running on this runner may be updated. `trace: null`:
   * one was sent that is not text.
   */
  update(runner: Runner, id: number | undefined, change: { info?: RunnerInfo; trace?: string | null; state?: string }): MaybePromise<UpdateResult> {
    return andThen(this.p.runners.touch(runner, change.info), () =>
      andThen(id === undefined ? undefined : this.p.builds.byId(id), (build): MaybePromise<UpdateResult> => {
        if (!build || build.runner_id !== runner.id || build.status !== 'running') return { ok: false, reason: 'not-found' };
        this.heard.set(build.id, Date.now());
        if (change.trace === null) return { ok: false, reason: 'trace-invalid' };
        const state = change.state === 'success' || change.state === 'failed' ? change.state : undefined;
        if (change.trace === undefined) return state ? andThen(this.finish(build.id, state), finishAnswer) : { ok: true, build };
        return this.replaceTrace(build, Buffer.from(change.trace, 'utf8'), state);
      }),
    );
  }

  /**
   * The PUT's full trace, and its final state when given, as one unit conditional on the build still
   * running: the PUT that loses a race (to a cancel, to the runner's other PUT) leaves neither its
   * trace nor its state.
   */
  private replaceTrace(build: Build, trace: Buffer, state: 'success' | 'failed' | undefined): MaybePromise<UpdateResult> {
    let finished: Build | undefined;
    const then = state && ((p: DomainPorts, publish: Publish) => andThen(this.finishIn(p, publish, build.id, (builds) => builds.finish(build.id, state)), (b) => ((finished = b), b !== undefined)));
    return andThen(this.b.traces.replaceWhileRunning(build.id, trace, then), (stored): MaybePromise<UpdateResult> => {
      if (!stored) return { ok: false, reason: 'not-found' };
      if (!stored.ok) return { ok: false, reason: 'trace-too-large' };
      if (!state) return { ok: true, build };
      return andThen(this.b.traces.release(build.id), () => finishAnswer(this.announce(finished)));
    });
  }

  /** running → success|failed; the finished build, or undefined when it was not running. */
  finish(id: number, status: 'success' | 'failed'): MaybePromise<Build | undefined> {
    return this.settle(id, (builds) => builds.finish(id, status));
  }

  /** pending|running → canceled; the canceled build, or undefined when it was neither. */
  cancel(id: number): MaybePromise<Build | undefined> {
    return this.settle(id, (builds) => builds.cancel(id));
  }

  /**
   * GitLab's retry: a new pending build of a finished build's definition (build-retry.ts); the old
   * one stays. A finished build never runs again, so nothing the check read can change before the create.
   */
  retry(id: number): MaybePromise<RetryResult> {
    return andThen(this.p.builds.byId(id), (old): MaybePromise<RetryResult> => {
      if (!old) return { ok: false, reason: 'not-found' };
      if (!canRetry(old)) return { ok: false, reason: 'not-finished', status: old.status };
      return andThen(this.create(retryInput(old), 1), (created) => ({ ok: true, build: created[0]! }));
    });
  }

  /**
   * When a running build was last heard of: the latest of its start, its runner's last contact and
   * the last trace part or update this server received for it; undefined when it is not running.
   * GitLab 8.17's stuck-build sweep goes by a build's last update, and its admin shows the runner's
   * last contact; a runner streaming a trace sends parts with the build's token, not its own, so its
   * contact alone would call a healthy long build silent.
   */
  lastUpdate(build: Build, runnerContact: number | null): number | undefined {
    if (build.status !== 'running') return undefined;
    return Math.max(build.started_at ?? 0, runnerContact ?? 0, this.heard.get(build.id) ?? 0) || undefined;
  }

  /**
   * Fails what a deleted runner was running: it can no longer update them (its token is unknown, so
   * its PUT is 403), and they would otherwise stay running until the stuck-build sweep; how many.
   */
  failRunningOf(runnerId: number): MaybePromise<number> {
    return andThen(this.p.builds.list({ runner_id: runnerId, status: 'running', limit: 1000 }), (running) =>
      andThen(inOrder(running, (build) => this.finish(build.id, 'failed')), (done) => done.filter(Boolean).length),
    );
  }

  /** Fails builds running past their timeout (the build's, else the project's); how many. Each finish is conditional on running: instances sweeping at once fail each build once. */
  failStuck(now: number): MaybePromise<number> {
    return andThen(this.p.builds.stuck(now), (stuck) => andThen(inOrder(stuck, (build) => this.finish(build.id, 'failed')), (done) => done.filter(Boolean).length));
  }

  /** The one way a build leaves pending/running: write and re-read in one unit (others hear of it at its commit), release its trace, tell everyone here. */
  private settle(id: number, write: (builds: DomainPorts['builds']) => MaybePromise<boolean>): MaybePromise<Build | undefined> {
    this.heard.delete(id);
    const done = this.b.unit((p, publish) => this.finishIn(p, publish, id, write));
    return andThen(done, (b) => andThen(this.b.traces.release(id), () => this.announce(b)));
  }

  private finishIn(p: DomainPorts, publish: Publish, id: number, write: (builds: DomainPorts['builds']) => MaybePromise<boolean>): MaybePromise<Build | undefined> {
    return andThen(write(p.builds), (written) =>
      written ? andThen(p.builds.byId(id), (b) => (b ? andThen(publish({ kind: 'build:finished', build: b }), () => b) : undefined)) : undefined,
    );
  }

  private announce(finished: Build | undefined): Build | undefined {
    if (finished) this.events.emit('build:finished', finished);
    return finished;
  }

  /**
   * Appends a trace part at `start` (GitLab's incremental trace rule). Synchronous on SQLite on
   * purpose: the trace PATCH is the hottest path and never waits; undefined when there is no such
   * build. `checked`: the build as the request's token was checked against it (not looked up again).
   */
  appendTrace(id: number, start: number, bytes: Buffer, checked?: BuildCredentials): MaybePromise<{ build: BuildCredentials; result: AppendResult } | undefined> {
    const build = checked?.id === id ? checked : this.p.builds.credentials(id);
    if (isPromise(build)) return build.then((b) => b && this.appendTo(b, start, bytes));
    return build && this.appendTo(build, start, bytes);
  }

  private appendTo(build: BuildCredentials, start: number, bytes: Buffer): MaybePromise<{ build: BuildCredentials; result: AppendResult } | undefined> {
    if (build.status === 'running') this.heard.set(build.id, Date.now());
    const result = this.b.traces.append(build, start, bytes);
    if (isPromise(result)) return result.then((r) => r && { build, result: r });
    return result && { build, result };
  }

  traceLength(id: number): MaybePromise<number> {
    return this.b.traces.length(id);
  }

  readTrace(id: number, start = 0): MaybePromise<{ body: Buffer | Readable | null; length: number }> {
    return this.b.traces.read(id, start);
  }

  /** Streams an upload into a staging file; nothing is visible until storeArtifacts. */
  stageArtifacts(source: Readable): Promise<StagedUpload> {
    return this.p.artifacts.stage(source);
  }

  discardArtifacts(staged: StagedUpload): void {
    this.p.artifacts.discard(staged);
  }

  get maxArtifactBytes(): number {
    return this.p.artifacts.maxBytes;
  }

  /**
   * Makes a staged upload the build's archive: the file is in place before the row points at it,
   * the replaced archive goes after, and the listing job hears of it (in-process only: the job it
   * triggers is this instance's, and must run once). The build as it is now.
   */
  async storeArtifacts(buildId: number, staged: StagedUpload, meta: { filename: string; expire_at: number | null }): Promise<Build> {
    // andThen, not await, up to the removal: on SQLite the steps stay in one synchronous turn.
    return await andThen(this.p.builds.byId(buildId), (before) => {
      const old = before?.artifacts_key ?? null;
      let key: string;
      try {
        key = this.p.artifacts.commit(buildId, staged);
      } catch (err) {
        this.p.artifacts.discard(staged);
        throw err;
      }
      const set = this.b.write((p) => p.builds.setArtifacts(buildId, { key, filename: meta.filename, size: staged.size, expire_at: meta.expire_at }));
      // The answer is the build as this upload left it, read before the removal's await: meanwhile
      // the expiry job may already erase an archive uploaded with `expire_in: 0` (the model test
      // caught a 201 without artifacts_file under load), and GitLab answers with what was stored.
      return andThen(set, () =>
        andThen(this.p.builds.byId(buildId), async (stored) => {
          if (old && old !== key) await this.p.artifacts.removeAsync(old);
          this.events.emit('artifacts:stored', { buildId, key });
          return stored!;
        }),
      );
    });
  }

  /** Erases the build's archive (the row forgets it first, so no reader is pointed at a missing file). */
  deleteArtifacts(build: Pick<Build, 'id' | 'artifacts_key'>): MaybePromise<Build | undefined> {
    const key = build.artifacts_key;
    if (!key) return this.p.builds.byId(build.id);
    return andThen(this.b.write((p) => p.builds.clearArtifacts(build.id)), () => {
      this.p.artifacts.remove(key);
      return this.p.builds.byId(build.id);
    });
  }

  /** Erases every archive whose expiry has passed at `now`; how many. */
  expireArtifacts(now: number): MaybePromise<number> {
    return andThen(this.p.builds.expiredArtifacts(now), (expired) => andThen(inOrder(expired, (build) => this.deleteArtifacts(build)), () => expired.length));
  }

  /** The archive's size on disk and a stream of it; throws when the file cannot be opened. */
  openArtifacts(key: string): { size: number; stream: Readable } {
    const size = this.p.artifacts.size(key);
    return { size, stream: this.p.artifacts.open(key) };
  }

  /** Where archive `key` is when it is still the build's current, unlisted one; undefined when there is nothing to list. */
  archiveToList(buildId: number, key: string): MaybePromise<string | undefined> {
    return andThen(this.isCurrentArchive(buildId, key), (current) =>
      current ? andThen(this.p.listings.summary(buildId), (listed) => (listed ? undefined : this.p.artifacts.pathOf(key))) : undefined,
    );
  }

  /** Whether `key` is still the build's archive (a newer upload or an expiry may have replaced it). */
  isCurrentArchive(buildId: number, key: string): MaybePromise<boolean> {
    return andThen(this.p.builds.byId(buildId), (b) => b?.artifacts_key === key);
  }

  /** Stores the file list of archive `key`; false when the build's archive is no longer that one. */
  recordListing(buildId: number, key: string, listing: ArchiveListing): MaybePromise<boolean> {
    return this.b.write((p) => p.listings.set(buildId, key, listing));
  }

  /** Archives stored without a listing (their job was lost, or an older version kept none). */
  unlistedArchives(): MaybePromise<{ id: number; key: string }[]> {
    return this.p.listings.unlisted();
  }

  listingSummary(buildId: number): MaybePromise<ListingSummary | undefined> {
    return this.p.listings.summary(buildId);
  }

  listing(buildId: number): MaybePromise<ArchiveListing | undefined> {
    return this.p.listings.get(buildId);
  }
}

/** What a poll knows of X-GitLab-Last-Update: the runner's value, and this instance's. */
export interface QueueSeen {
  lastUpdate: string | undefined;
  current: () => string;
}

/**
 * Polls on a dispatch that does not read the queue's value itself (SQLite's): the value is read
 * once, before the take, decides it and is answered.
 */
function pollAfterReading(dispatch: Dispatch, info: RunnerInfo | undefined, seen: QueueSeen) {
  const current = seen.current();
  return async (runner: Runner): Promise<SeenPoll | typeof RUNNER_CHANGED> => {
    const taken = await dispatch.poll(runner, info, seen.lastUpdate !== current);
    return taken === RUNNER_CHANGED ? taken : { taken, lastUpdate: current };
  };
}
