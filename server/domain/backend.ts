// What the domain runs on: the storage ports, which may answer values (SQLite) or promises
// (PostgreSQL), and the few strategies where backends really differ. Each rule is written once in
// this folder over these; a backend (store/) only supplies them.
import type { Readable } from 'node:stream';
import type { ArtifactsPort, BuildsPort, ListingsPort, ProjectsPort, RunnersPort, UsersPort } from '../store/ports/ports.ts';
import type { Build, BuildCredentials, BuildStatus } from '../store/ports/build.ts';
import type { Runner, RunnerInfo } from '../store/ports/runner.ts';
import type { AppendResult } from '../store/ports/trace.ts';
import type { Taken } from './dispatch-batch.ts';
import type { Loose, MaybePromise } from './maybe-promise.ts';

/**
 * A poll's answer when the runner it was given is no longer as given: PostgreSQL's, for a runner
 * from its cache (store/pg/runner-cache.ts) paused, deleted or edited on another instance.
 * BuildRules.pollAs reads the runner again and polls with that; no caller outside the domain sees
 * it. SQLite never gives it: its runners are read from the only writer's own store.
 */
export const RUNNER_CHANGED = Symbol('runner changed');

export interface DomainPorts {
  builds: Loose<BuildsPort>;
  runners: Loose<RunnersPort>;
  projects: Loose<ProjectsPort>;
  users: Loose<UsersPort>;
  listings: Loose<ListingsPort>;
  artifacts: ArtifactsPort;
}

/** A change other instances must hear of; this instance's events are emitted by the domain after the commit. */
export interface BuildChange {
  kind: 'build:pending' | 'build:finished';
  build: Build;
}

export type Publish = (change: BuildChange) => MaybePromise<void>;

/** The unit fn runs in: its writes commit together, and what it publishes is delivered at that commit (PostgreSQL's NOTIFY) or not at all. */
export type Unit = <T>(fn: (ports: DomainPorts, publish: Publish) => MaybePromise<T>) => MaybePromise<T>;

/** Taking a build: SQLite's batch of one event-loop turn (dispatch-batch.ts), PostgreSQL's SKIP LOCKED statement. */
export interface Dispatch {
  poll(runner: Runner, info: RunnerInfo | undefined, take: boolean): Promise<Taken | undefined | typeof RUNNER_CHANGED>;
}

/** A poll's answer where the store keeps X-GitLab-Last-Update's value: the build taken, if any, and the value read with the take. */
export interface SeenPoll {
  taken?: Taken;
  lastUpdate: string;
}

/**
 * Taking a build where the store keeps X-GitLab-Last-Update's value (PostgreSQL's shared counter):
 * the value is read by the statement that takes, which takes only when the runner's `lastUpdate`
 * differs from it, so a poll is one round trip, not a read of the value and then the take.
 */
export interface QueueDispatch {
  pollSeen(runner: Runner, info: RunnerInfo | undefined, lastUpdate: string | undefined): Promise<SeenPoll | typeof RUNNER_CHANGED>;
}

/** An append's answer; `status` where the store read the build's with it, which may be newer than the `build` given (PostgreSQL). */
export type TraceAppend = AppendResult & { status?: BuildStatus };

/** Traces: a file per build with one writer (SQLite), or a row lock and a length in the database shared by instances. */
export interface TraceWrites {
  length(buildId: number): MaybePromise<number>;
  read(buildId: number, start: number): MaybePromise<{ body: Buffer | Readable | null; length: number }>;
  /** Closes what is held open for a build that will not be appended to soon (it finished). */
  release(buildId: number): MaybePromise<void>;
  /**
   * What a trace part's token is checked against, before its body is read: SQLite's store, cached
   * there; on PostgreSQL the credentials this instance read for the build before, whose status the
   * append reads again (no round trip when the build is known).
   */
  credentials(buildId: number): MaybePromise<BuildCredentials | undefined>;
  /** Appends at `start` (GitLab's incremental rule); undefined when the build is gone meanwhile. */
  append(build: BuildCredentials, start: number, bytes: Buffer): MaybePromise<TraceAppend | undefined>;
  /**
   * Replaces the whole trace while the build is running. `then` runs in the same unit once the trace
   * fits: when it answers false neither it nor the trace is kept, and the answer is undefined, as it
   * is when the build stopped running first.
   */
  replaceWhileRunning(buildId: number, bytes: Buffer, then?: (ports: DomainPorts, publish: Publish) => MaybePromise<boolean>): MaybePromise<AppendResult | undefined>;
}

/** The runners polls may start from: PostgreSQL keeps those it read last (its poll checks them); SQLite's store is current. */
export interface PollRunners {
  get(token: string): Runner | undefined;
  remember(token: string, runner: Runner | undefined): void;
}

export interface DomainBackend {
  /** Reads and single writes outside a unit. */
  ports: DomainPorts;
  /** Several writes as one. */
  unit: Unit;
  /** One write that is atomic alone (SQLite still commits it as a transaction). */
  write: <T>(fn: (ports: DomainPorts) => MaybePromise<T>) => MaybePromise<T>;
  dispatch: Dispatch | QueueDispatch;
  traces: TraceWrites;
  pollRunners: PollRunners;
  /** The instance's registration token (runners of every project register with it). */
  registrationToken: string;
}
