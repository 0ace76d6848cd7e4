// Which connections this monitor samples, and where a sample's writes go: the one thing that differs
// between one server on SQLite (owns-everything.ts) and instances sharing PostgreSQL
// (shared-ownership.ts). The Monitor (monitor.ts) does everything else once and asks its policy.
import type { Clock } from '../clock.ts';
import type { MaybePromise } from '../domain/maybe-promise.ts';
import type { Connection, MonitorStore } from '../store/ports/monitor-ports.ts';
import type { AlertJudgement } from './alerts.ts';
import type { ConnectionHistory, Retention } from './connection-history.ts';

/** How the monitor's store answers: at once (SQLite) or later (PostgreSQL); the monitor answers alike. */
export type Answers = 'now' | 'later';
export type Answer<A extends Answers, T> = A extends 'later' ? Promise<T> : T;

/** What one sample stores besides its history rows: the connection's health and what it says of its alerts. */
export interface SampleWrites {
  at: number;
  error: string | null;
  /** The full sample, when it is time to store it again (Ownership.fullSampleEveryMs). */
  sampleJson: string | undefined;
  /** A good sample's judgement of the connection's alerts (alerts.ts); null for a gap, which changes none. */
  alerts: AlertJudgement | null;
}

/** A connection this monitor samples: the history samples go into, and how they are stored. */
export interface Recorder {
  history: ConnectionHistory;
  /** Runs `record` (which writes into `history`) and stores all it wrote and answered as one unit. */
  commit(record: () => SampleWrites): MaybePromise<void>;
}

/** The monitor, as its policy calls it back. */
export interface OwnershipHost {
  readonly clock: Clock;
  newHistory(id: string, store: Pick<MonitorStore, 'history' | 'tx'>): ConnectionHistory;
  /** Takes the stored latest sample as the connection's current one. */
  loadLatest(id: string, last: { at: number; json: string } | undefined): void;
  schedule(id: string): void;
  changed(c: Connection): void;
  removed(id: string): void;
  /** Stops sampling a connection and lets the policy release it. */
  letGo(id: string): void;
  /** Stops sampling a connection whose memory is no longer the stored one; the policy loads it again. */
  unload(id: string): void;
  /** Background work: logged when it fails, awaited by idle() and stop(). */
  track(work: Promise<unknown>): void;
  warn(msg: string): void;
}

export interface Ownership {
  /** How often a good sample also stores the full sample (what `current` answers after a restart). */
  readonly fullSampleEveryMs: number;
  /** Loads what this instance samples and schedules it (the embedded connection exists by now). */
  start(): MaybePromise<void>;
  /** Whether this instance samples the connection now. */
  holds(id: string): boolean;
  /** After a read: whether its sample is still this instance's to store. */
  samplesStill(id: string): boolean;
  /** The history a query reads: the one sampled here, or one following another instance's rows. */
  historyOf(id: string): MaybePromise<ConnectionHistory>;
  /** The recorder of a connection this instance samples; undefined when it does not. */
  recorder(id: string): MaybePromise<Recorder | undefined>;
  /** A connection was added, edited or removed here (after the change committed). */
  announce(id: string): MaybePromise<void>;
  /** An enabled connection this instance does not hold: try to take it. */
  claimSoon(): void;
  /** Stops holding the connection; true when it was held (its memory here goes with it). */
  release(id: string): boolean;
  /** The connection is gone: drop what the policy keeps of it. */
  forget(id: string): void;
  /** Retention for stored history; the monitor prunes alerts itself. */
  prune(now: number, retention: Retention): MaybePromise<void>;
  /** Work of the policy's own in flight (idle() waits for it), and whether more may follow. */
  inFlight(): Promise<unknown>[];
  busy(): boolean;
  /** First in stop(): nothing new begins. */
  halt(): void;
  /** Last in stop(): what the policy holds is freed. */
  close(): Promise<void>;
}

export type OwnershipOf = (host: OwnershipHost) => Ownership;
