// The storage ports: what the domain layer (server/domain/) may ask of storage, one interface per
// kind of record. The adapters in sqlite/, files/ and pg/ implement them; nothing outside
// server/store/ names an adapter class or the database handle.
//
// Sync core, on purpose. Every port here answers synchronously, because the SQLite engine is
// synchronous and two paths depend on that for their speed and their guarantees: the dispatch batch
// (many polls, one transaction, no await inside it: exactly-once hand-out follows from one thread)
// and the trace PATCH (a synchronous handler, no promise per part). An asynchronous adapter
// (PostgreSQL) answers the same ports with promises (the domain sees both as Loose ports,
// domain/backend.ts), and those two hot paths are strategies of its backend instead: the domain's
// rules are written once over values or promises, and on SQLite every answer stays a value.
//
// Caches live behind the port that writes their table, so "only this class writes the table" holds
// by construction: the runner cache (by token digest) in RunnersPort, the build credentials cache in
// BuildsPort. A rolled-back transaction drops both (Transactions.tx).
import type { Readable } from 'node:stream';
import type fs from 'node:fs';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from './build.ts';
import type { NewRunner, Runner, RunnerInfo } from './runner.ts';
import type { Project } from './project.ts';
import type { User } from './user.ts';
import type { AppendResult } from './trace.ts';
import type { ArchiveListing, ListingSummary, StagedUpload } from './artifact.ts';

/** One atomic unit of storage work; nested calls join the outer one, a throw rolls all of it back. */
export interface Transactions {
  tx<T>(fn: () => T): T;
}

export interface BuildsPort {
  create(input: NewBuild): Build;
  /** `count` builds of one input, in order: all or none, as create's missing project. */
  createMany(input: NewBuild, count: number): Build[];
  byId(id: number): Build | undefined;
  byIds(ids: number[]): Build[];
  byToken(token: string): Build | undefined;
  /** Status and token digests, cached per build (the trace path reads nothing else). */
  credentials(id: number): BuildCredentials | undefined;
  /** Hands the oldest pending build this runner may take to it (exactly once), or undefined. */
  take(runner: Runner): Build | undefined;
  /** running → success|failed; false when the build was not running. */
  finish(id: number, status: 'success' | 'failed'): boolean;
  /** pending|running → canceled; false otherwise. */
  cancel(id: number): boolean;
  /** Running builds past their timeout at `now`. */
  stuck(now: number): Build[];
  setArtifacts(id: number, a: { key: string; filename: string; size: number; expire_at: number | null }): void;
  clearArtifacts(id: number): void;
  expiredArtifacts(now: number): Build[];
  artifactKeys(): Set<string>;
  list(filter?: BuildFilter): Build[];
  countByStatus(): Record<string, number>;
}

export interface RunnersPort {
  create(input: NewRunner): Runner;
  byId(id: number): Runner | undefined;
  /** The runner with this token; the object is shared between requests of the same runner. */
  byToken(token: string): Runner | undefined;
  /** Whether the runner still exists and is active (paused or deleted since it was read?). */
  stillActive(runner: Runner): boolean;
  /** Records contact (and the runner's self-description); an unchanged runner is written at most every few seconds. */
  touch(runner: Runner, info?: RunnerInfo): void;
  setActive(id: number, active: boolean): boolean;
  /** Marks runners silent since `before` offline; how many changed. */
  markOffline(before: number): number;
  delete(id: number): boolean;
  list(): Runner[];
  /** Builds handed to each runner (any status), by runner id; runners with none are absent. */
  buildCounts(): Map<number, number>;
  /** Builds handed to one runner (any status). */
  buildCount(id: number): number;
}

export interface ProjectsPort {
  create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): Project;
  byId(id: number): Project | undefined;
  byRunnersToken(token: string): Project | undefined;
  byCiToken(token: string): Project | undefined;
  list(): Project[];
}

export interface UsersPort {
  create(username: string, admin: boolean): User;
  byUsername(username: string): User | undefined;
  byToken(token: string): User | undefined;
  list(): User[];
}

/** Instance secrets and settings rows (the generated admin and registration tokens live here). */
export interface SecretsPort {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
  /** The stored value, or `make()` stored now; an explicit value overrides and is stored. */
  ensure(key: string, explicit: string | undefined, make: () => string): string;
}

/** Build traces: the file is the truth for a trace's length; appends are synchronous (one writer per build). */
export interface TracesPort {
  length(buildId: number): number;
  /** Appends at `start`, which must equal the current length. */
  append(buildId: number, start: number, bytes: Buffer): AppendResult;
  /** Replaces the whole trace atomically. */
  replace(buildId: number, bytes: Buffer): AppendResult;
  /** From `start` to the current length: a Buffer when short, else a stream; null when there is nothing. */
  read(buildId: number, start?: number): { body: Buffer | Readable | null; length: number };
  readAll(buildId: number): Buffer;
  remove(buildId: number): void;
  /** Closes what is held open for a build that will not be appended to soon (it finished). */
  release(buildId: number): void;
}

/** What ArtifactsPort.stage throws when the upload reaches the limit (exactly the limit is too large, as in GitLab). */
export { TooLargeError } from './artifact.ts';

/** Artifact archives: staged whole, then committed under a server-made key. */
export interface ArtifactsPort {
  readonly maxBytes: number;
  /** Where the archive `key` is on disk (the listing job reads the zip there). */
  pathOf(key: string): string;
  stage(source: Readable): Promise<StagedUpload>;
  commit(buildId: number, staged: StagedUpload): string;
  discard(staged: StagedUpload): void;
  remove(key: string | null): void;
  /** remove off the event loop: where a request waits for it (a replaced archive). */
  removeAsync(key: string | null): Promise<void>;
  size(key: string): number;
  open(key: string): fs.ReadStream;
}

/** The file list of each build's current archive. */
export interface ListingsPort {
  /** Stores the listing of archive `key`; false when the build's archive is no longer that one. */
  set(buildId: number, key: string, listing: ArchiveListing): boolean;
  summary(buildId: number): ListingSummary | undefined;
  get(buildId: number): ArchiveListing | undefined;
  /** Builds with an archive but no listing yet. */
  unlisted(): { id: number; key: string }[];
}

/** The UI's saved state (range, filters, selected connection…): one small JSON document, replaced whole. */
export interface SavedUiState {
  values: Record<string, unknown>;
  /** Epoch ms of the save; 0 when the file did not say. */
  savedAt: number;
}

export interface UiStatePort {
  /** undefined when nothing was saved (or the file cannot be read). */
  read(): SavedUiState | undefined;
  write(values: Record<string, unknown>, savedAt: number): void;
}
