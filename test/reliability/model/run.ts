// Runs the model-based test: fast-check generates command sequences, each run on a fresh server and
// data dir, and shrinks a failing one. The seed is printed first; replay a failure with
// FC_SEED=<seed> (and FC_PATH=<path> from the failure report to go straight to the shrunk case).
import fc from 'fast-check';
import { commandArbitrary, Kill9, modeCommandArbitrary } from './commands.ts';
import { sweep } from './checks.ts';
import { Model } from './model.ts';
import { heal } from './outage.ts';
import { RealSystem, type Backing, type Mode } from './system.ts';
import type { ConnectionView } from '../../../contract/app.ts';

export interface ModelRunOptions {
  name: string;
  kind: 'inproc' | 'child';
  /** Runs to generate; with `steps`, at most this many. */
  numRuns: number;
  maxCommands: number;
  /**
   * Stop at this many steps: the run that reaches it ends there (and is swept as every run is), the
   * runs left are skipped. A run's length is random (0 to maxCommands): five runs of up to 3,000 came
   * to 11,600 steps with one draw and 7,000 with another.
   */
  steps?: number;
  /** Relative weights (the other commands weigh ~800 together). */
  restartWeight: number;
  killWeight: number;
  /** Fixed seed unless FC_SEED is set; undefined = a new one each time. */
  seed?: number;
  /**
   * The seed's run to start at (fast-check's replay path "<n>"): runs firstRun .. firstRun+numRuns-1
   * are the very sequences a run from 0 would generate there, so one seed's runs can be spread over
   * several files (FC_PATH, when set, replaces it; the failure report's path counts from run 0).
   */
  firstRun?: number;
  /** Stop generating new runs after this long (the runs done so far still count). */
  timeLimitMs?: number;
  /**
   * Where the job system and the data live (system.ts): given, the run uses the mode step set
   * (commands.ts's modeCommandArbitrary) with its faults, and the job counters are checked exactly.
   */
  mode?: Mode;
  backing?: Backing;
  /** The faults' weight (the other steps weigh ~800 together); 0 = none. */
  faultWeight?: number;
  /**
   * The test's signal (vitest aborts it when the test times out): the run in progress loses its
   * servers at once and no further run or shrink starts. Without it the runs went on after the test
   * had failed, against a database its hooks had dropped, with servers nobody would stop.
   */
  signal?: AbortSignal;
}

export interface ModelRunTotals {
  runs: number;
  steps: number;
  restarts: number;
  kills: number;
  faults: number;
  /** Steps answered 503 during a fault (not applied), and steps of unknown outcome. */
  notApplied: number;
  unknown: string[];
  ms: number;
}

async function setupModel(real: RealSystem, exact: boolean): Promise<Model> {
  const m = new Model();
  m.exact = exact;
  const stats = (await real.admin('GET', '/api/v3/sidekiq/job_stats')).json().jobs;
  m.counters = { processed0: stats.processed, failed0: stats.failed, processed: stats.processed, failed: stats.failed };
  for (const c of (await real.admin('GET', '/api/app/connections')).json() as ConnectionView[]) {
    m.connections.push({ id: c.id, name: c.name, enabled: c.enabled, interval: c.interval_s, hasToken: c.has_token, embedded: c.kind === 'embedded' });
  }
  return m;
}

export async function runModel(opts: ModelRunOptions): Promise<ModelRunTotals> {
  const envSeed = Number(process.env.FC_SEED);
  const seed = Number.isInteger(envSeed) && process.env.FC_SEED ? envSeed : (opts.seed ?? (Math.random() * 2 ** 31) | 0);
  const path = process.env.FC_PATH || (opts.firstRun ? String(opts.firstRun) : undefined);
  const numRuns = Number(process.env.FC_RUNS) || opts.numRuns;
  const budget = opts.steps === undefined ? '' : `, until ${opts.steps} steps`;
  const from = path === undefined ? '' : ` from path ${path}`;
  const mode = opts.mode === undefined ? '' : `, ${opts.mode} mode, fault weight ${opts.faultWeight ?? 0}`;
  console.log(`[model:${opts.name}] seed ${seed}${from}, ${numRuns} runs of up to ${opts.maxCommands} steps${budget} (${opts.kind} server${mode}); replay with FC_SEED=${seed}`);
  const totals: ModelRunTotals = { runs: 0, steps: 0, restarts: 0, kills: 0, faults: 0, notApplied: 0, unknown: [], ms: 0 };
  const started = Date.now();
  // A time limit stops fast-check from starting runs, not the one in progress: it is awaited below,
  // so its steps are counted here and it never overlaps what the caller runs next.
  let active = 0;
  // After a failure every call is fast-check shrinking it: those run in full, whatever the budget,
  // until the shrink budget is spent. Then every further try passes without running, which ends
  // fast-check's shrinking at the smallest failing case found so far: an intermittent failure (one
  // that a shrunk sequence rarely repeats) once shrank for 600 s in CI, and the test's timeout then
  // hid the cause.
  let failed = false;
  let failedAt = 0;
  let firstFailure = '';
  const shrinkBudgetMs = Number(process.env.FC_SHRINK_MS) || 120_000;
  const weights = { restartWeight: opts.restartWeight, killWeight: opts.killWeight };
  const arbitrary = opts.mode === undefined ? commandArbitrary(weights) : modeCommandArbitrary(opts.mode, { ...weights, faultWeight: opts.faultWeight ?? 0 });
  const commands = fc.commands([arbitrary], { maxCommands: opts.maxCommands, size: 'max' });
  const runOnce = async (cmds: Iterable<fc.AsyncCommand<Model, RealSystem>>, stepLimit: number) => {
    active++;
    const runStarted = Date.now();
    const cpuStarted = process.cpuUsage();
    const real = await RealSystem.start({ kind: opts.kind, mode: opts.mode, backing: opts.backing, exact: opts.mode !== undefined });
    const abandon = () => real.killServers();
    // Aborted while the servers were starting: no listener heard it.
    if (opts.signal?.aborted) abandon();
    opts.signal?.addEventListener('abort', abandon, { once: true });
    let model: Model | undefined;
    try {
      model = await setupModel(real, opts.mode !== undefined);
      model.stepLimit = stepLimit;
      const m = model;
      try {
        await fc.asyncModelRun(() => ({ model: m, real }), cmds);
      } finally {
        // The file's Redis or PostgreSQL is up again for the next run, whatever happened.
        await heal(m, real).catch(() => undefined);
      }
      // A child-process run ends with a kill -9 when the sequence held none: every run has one.
      if (real.kind === 'child' && m.kills === 0) await new Kill9().run(m, real);
      await sweep(m, real);
    } finally {
      opts.signal?.removeEventListener('abort', abandon);
      await real.close();
      active--;
      if (model) {
        // Each run's steps: what a file holding part of a seed's runs must add up to (the model files say how they are split).
        const cpu = process.cpuUsage(cpuStarted);
        const faults = opts.mode === undefined ? '' : `, ${model.faults} faults (${model.notApplied} steps answered 503, ${model.unknown.length} of unknown outcome)`;
        console.log(
          `[model:${opts.name}] ${failed ? 'shrinking, try' : 'run'} ${(opts.firstRun ?? 0) + totals.runs}: ${model.steps} steps, ${model.restarts} restarts, ${model.kills} kill -9${faults} in ${((Date.now() - runStarted) / 1000).toFixed(1)} s (${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU in this process)`,
        );
        totals.runs++;
        totals.steps += model.steps;
        totals.restarts += model.restarts;
        totals.kills += model.kills;
        totals.faults += model.faults;
        totals.notApplied += model.notApplied;
        totals.unknown.push(...model.unknown);
      }
    }
  };
  try {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        if (opts.signal?.aborted) return;
        if (failed) return Date.now() - failedAt > shrinkBudgetMs ? undefined : runOnce(cmds, Infinity);
        if (opts.steps !== undefined && totals.steps >= opts.steps) return;
        const run = (opts.firstRun ?? 0) + totals.runs;
        try {
          await runOnce(cmds, opts.steps === undefined ? Infinity : opts.steps - totals.steps);
        } catch (err) {
          failed = true;
          failedAt = Date.now();
          firstFailure = `run ${run}: ${err instanceof Error ? err.message : String(err)}`;
          // Shrinking reruns the case many times and can outlast the test's timeout, which then names
          // only the timeout (seen on a loaded machine: 600 s of shrinking): the cause is printed now.
          console.error(`[model:${opts.name}] run ${run} failed; shrinking it next (FC_NO_SHRINK=1 skips that): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          throw err;
        }
      }),
      {
        seed,
        path,
        numRuns,
        endOnFailure: process.env.FC_NO_SHRINK === '1',
        interruptAfterTimeLimit: opts.timeLimitMs,
        markInterruptAsFailure: false,
      },
    );
  } catch (err) {
    // fast-check names the shrunk case's error; the first one (which may differ) goes with it, so
    // the test's failure alone says what broke, and whether shrinking gave up early.
    if (err instanceof Error && firstFailure) {
      const gaveUp = Date.now() - failedAt > shrinkBudgetMs ? ` Shrinking stopped after its ${shrinkBudgetMs / 1000} s budget (FC_SHRINK_MS).` : '';
      err.message += `\n[model:${opts.name}] the first failure, before shrinking, ${firstFailure}.${gaveUp}`;
    }
    throw err;
  }
  while (active > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  totals.ms = Date.now() - started;
  const faults = opts.mode === undefined ? '' : `, ${totals.faults} faults (${totals.notApplied} steps answered 503, ${totals.unknown.length} of unknown outcome)`;
  console.log(`[model:${opts.name}] ${totals.runs} runs, ${totals.steps} steps, ${totals.restarts} restarts, ${totals.kills} kill -9${faults} in ${(totals.ms / 1000).toFixed(1)} s`);
  for (const u of totals.unknown.slice(0, 20)) console.log(`[model:${opts.name}] unknown outcome: ${u}`);
  return totals;
}
