// `jobscope simulate`: a fleet of virtual runners against a coordinator (default: an embedded
// Jobscope on a temp data dir), a live progress block on a terminal (plain lines otherwise), a
// summary at the end, and an exit code a pipeline can use: 1 when the server broke the protocol,
// 0 otherwise, 2 for usage errors.
// The embedded coordinator comes from the caller (hosts/embedded-coordinator.ts): the
// simulator is an HTTP client and depends on the server's contract only.
import fs from 'node:fs';
import { Command, CommanderError } from 'commander';
import type { FleetStatus, Scenario } from '../contract/simulator.ts';
import type { InstanceView } from '../contract/control.ts';
import { hideUserinfo } from '../common/secrets.ts';
import { parseFaultList } from './faults.ts';
import { Fleet, FleetSetupError } from './fleet.ts';
import { Journal } from './journal.ts';
import { exportScenario, groupsOf, parseScenario, ScenarioError, scenarioOfForm } from './scenario.ts';
import { formatProgress, formatSummary, progressLine } from './cli-format.ts';

export class UsageError extends Error {}

/** A coordinator started for one run when no --target is given; close() also removes its data. */
export interface EmbeddedCoordinator {
  url: string;
  registrationToken: string;
  adminToken: string;
  close(): Promise<void>;
}

export interface SimulateDeps {
  startEmbedded: () => Promise<EmbeddedCoordinator>;
}

export interface Flags {
  target?: string;
  registrationToken?: string;
  adminToken?: string;
  runners?: string;
  builds?: string;
  scenario?: string;
  seed?: string;
  traceKb?: string;
  partKb?: string;
  artifactKb?: string;
  rateKbps?: string;
  updateMs?: string;
  pollMs?: string;
  failRate?: string;
  faults?: string;
  tags?: string;
  runnerTokens?: string;
  duration?: string;
  verify: boolean;
  shared?: boolean;
  json?: boolean;
  exportScenario?: string;
}

function num(name: string, v: string | undefined, o: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (o.int && !Number.isInteger(n)) || (o.min !== undefined && n < o.min) || (o.max !== undefined && n > o.max)) {
    const range = o.max !== undefined ? ` between ${o.min ?? 0} and ${o.max}` : o.min !== undefined ? ` of at least ${o.min}` : '';
    throw new UsageError(`--${name}: expected ${o.int ? 'an integer' : 'a number'}${range}, got "${v}"`);
  }
  return n;
}

/** Flags over the scenario file over the defaults: one scenario the fleet runs (and can export). */
export function scenarioOf(f: Flags): Scenario {
  let s: Scenario;
  if (f.scenario) {
    let text: string;
    try {
      text = fs.readFileSync(f.scenario, 'utf8');
    } catch (err) {
      throw new UsageError(`--scenario: cannot read ${f.scenario}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      s = parseScenario(text);
    } catch (err) {
      if (err instanceof ScenarioError) throw new UsageError(`--scenario ${f.scenario}: ${err.problems.join('\n  ')}`);
      throw err;
    }
    if (f.runners !== undefined) throw new UsageError('--runners and --scenario both say how many runners: give the count in the scenario, or drop --scenario');
  } else {
    s = scenarioOfForm({ runners: num('runners', f.runners, { int: true, min: 1, max: 1000 }) ?? 4, seed: 1 });
    if (f.runnerTokens && f.runners !== undefined) throw new UsageError('--runners and --runner-tokens both say how many runners: give one of them');
    s.defaults = {};
    if (f.tags) s.runners[0]!.tags = f.tags.split(',').map((t) => t.trim()).filter(Boolean);
    if (f.runnerTokens) {
      const tokens = f.runnerTokens.split(',').map((t) => t.trim()).filter(Boolean);
      s.runners[0] = { ...s.runners[0]!, count: tokens.length, tokens };
    }
  }
  const behaviour = {
    trace_kb: num('trace-kb', f.traceKb, { min: 0, max: 65536 }),
    part_kb: num('part-kb', f.partKb, { min: 0.0625, max: 16384 }),
    artifact_kb: num('artifact-kb', f.artifactKb, { min: 0, max: 1048576 }),
    rate_kbps: num('rate-kbps', f.rateKbps, { min: 0 }),
    update_ms: num('update-ms', f.updateMs, { int: true, min: 0, max: 600000 }),
    poll_ms: num('poll-ms', f.pollMs, { int: true, min: 0, max: 600000 }),
    fail_rate: num('fail-rate', f.failRate, { min: 0, max: 1 }),
  };
  for (const [k, v] of Object.entries(behaviour)) if (v !== undefined) (s.defaults ??= {})[k as keyof typeof behaviour] = v;
  if (f.faults) {
    try {
      s.faults = { ...(s.faults ?? {}), ...parseFaultList(f.faults) };
    } catch (err) {
      throw new UsageError(`--faults: ${(err as Error).message}`);
    }
  }
  const seed = num('seed', f.seed, { int: true, min: 0, max: 4294967295 });
  if (seed !== undefined) s.seed = seed;
  const builds = num('builds', f.builds, { int: true, min: 0, max: 100000 });
  if (builds !== undefined) s.builds = builds;
  return s;
}

/**
 * The target's runner registration token, read with the admin token from the control API (the
 * same call the UI makes): a Jobscope target then needs only --admin-token. A refused token is a
 * usage error naming the flag, not a fleet whose every register answers 403.
 */
async function registrationTokenOf(target: string, adminToken: string): Promise<string> {
  const url = new URL('api/v3/sim/instance', target.endsWith('/') ? target : `${target}/`);
  let res: Response;
  try {
    // Not followed: fetch drops only Authorization on a redirect to another origin, so the
    // PRIVATE-TOKEN would go wherever the target points. A redirect is reported instead.
    res = await fetch(url, { headers: { 'PRIVATE-TOKEN': adminToken }, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new UsageError(`--admin-token: reading ${url.pathname} failed (${(err as Error).message}); give --registration-token instead`);
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    throw new UsageError(
      `--target: GET ${url.pathname} answered ${res.status}, a redirect to ${hideUserinfo(res.headers.get('location') ?? 'elsewhere', '***')}; the admin token is not sent after a redirect: give the address it points to as --target`,
    );
  }
  const body = (await res.json().catch(() => null)) as Partial<InstanceView> | { message?: string } | null;
  const token = body && 'runners_registration_token' in body ? body.runners_registration_token : undefined;
  if (res.ok && typeof token === 'string' && token) return token;
  const why = body && 'message' in body && typeof body.message === 'string' ? `: ${body.message}` : '';
  throw new UsageError(
    `--admin-token: the target answered ${res.status}${why} to GET ${url.pathname}, so its registration token is unknown; check the admin token, or give --registration-token (a target that is not Jobscope needs it)`,
  );
}

/** Fails early, with what to do, when nothing answers at the target (runners would retry forever). */
async function reachable(target: string): Promise<void> {
  try {
    await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new UsageError(`--target ${target} does not answer (${cause?.code ?? cause?.message ?? (err as Error).message}); is the server running and the URL right?`);
  }
}

export async function simulate(f: Flags, deps: SimulateDeps): Promise<number> {
  const scenario = scenarioOf(f);
  if (f.exportScenario) {
    fs.writeFileSync(f.exportScenario, JSON.stringify(exportScenario(scenario), null, 2) + '\n');
    process.stderr.write(`scenario written to ${f.exportScenario}\n`);
  }
  const duration = num('duration', f.duration, { min: 0.1 });
  let embedded: EmbeddedCoordinator | undefined;
  let target = f.target;
  let registrationToken = f.registrationToken;
  let adminToken = f.adminToken;
  if (!target) {
    embedded = await deps.startEmbedded();
    target = embedded.url;
    registrationToken ??= embedded.registrationToken;
    adminToken ??= embedded.adminToken;
    scenario.builds ??= 20;
  } else {
    try {
      const u = new URL(target);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new UsageError(`--target: "${target}" is not an http(s) URL; give e.g. http://127.0.0.1:8090`);
    }
    await reachable(target);
  }
  const groups = groupsOf(scenario);
  if (!registrationToken && adminToken && !groups.every((g) => g.tokens?.length)) registrationToken = await registrationTokenOf(target, adminToken);
  if (!registrationToken && !groups.every((g) => g.tokens?.length)) {
    throw new UsageError('the runners need --registration-token, --admin-token of a Jobscope target, or runner tokens in the scenario to talk to --target');
  }
  if (scenario.builds === undefined && duration === undefined && !process.stdin.isTTY) {
    process.stderr.write('note: no --builds and no --duration: running until interrupted (Ctrl-C)\n');
  }
  const builds = scenario.builds ?? null;
  const fleet = new Fleet({
    target,
    registrationToken,
    adminToken,
    verify: f.verify && (scenario.verify ?? true) && adminToken !== undefined,
    seed: scenario.seed ?? 1,
    builds,
    createBuilds: (scenario.create_builds ?? true) && adminToken !== undefined && (builds ?? 0) > 0,
    buildTemplate: scenario.build_template,
    groups,
    journal: new Journal({ capacity: 2000, bodyBytes: 1024 }),
    shared: f.shared === true || scenario.shared === true,
  });

  const tty = process.stderr.isTTY === true && !f.json;
  let drawn = 0;
  const draw = (s: FleetStatus) => {
    if (tty) {
      const block = formatProgress(s, process.stderr.columns ?? 100);
      process.stderr.write((drawn ? `\x1b[${drawn}A\x1b[0J` : '') + block.join('\n') + '\n');
      drawn = block.length;
    } else process.stderr.write(progressLine(s) + '\n');
  };
  const onSignal = () => void fleet.stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let timer: NodeJS.Timeout | undefined;
  let stopper: NodeJS.Timeout | undefined;
  try {
    try {
      await fleet.start();
    } catch (err) {
      if (err instanceof FleetSetupError) throw new UsageError(err.message);
      throw err;
    }
    timer = setInterval(() => draw(fleet.status()), tty ? 250 : 2000);
    if (duration !== undefined) stopper = setTimeout(() => void fleet.stop(), duration * 1000);
    await fleet.finished;
  } finally {
    clearInterval(timer);
    clearTimeout(stopper);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const status = fleet.status();
  if (tty) draw(status);
  if (f.json) process.stdout.write(JSON.stringify(status, null, 2) + '\n');
  else process.stdout.write(formatSummary(status, { embedded: embedded !== undefined, verify: fleet.opts.verify }) + '\n');
  if (embedded) await embedded.close();
  return status.protocol_broken ? 1 : 0;
}

function withOptions(cmd: Command): Command {
  return cmd
    .description('run a fleet of virtual GitLab runners (API v1) against a server; exit 1 if the server broke the protocol')
    .option('--target <url>', 'coordinator base URL (default: an embedded Jobscope on a temp data dir)')
    .option('--registration-token <token>', 'runner registration token of the target (read with --admin-token from a Jobscope target when not given)')
    .option('--admin-token <token>', 'PRIVATE-TOKEN of a Jobscope target: read its registration token, create --builds and verify traces and artifacts')
    .option('--runners <n>', 'virtual runners (default 4)')
    .option('--builds <m>', 'builds to finish (created through the control API when an admin token is known; default 20 embedded)')
    .option('--scenario <file.json>', 'a fleet described as JSON (docs/simulator.md); flags below override its defaults')
    .option('--seed <n>', 'seed of every random choice (same seed, same run)')
    .option('--trace-kb <kb>', 'size of each build log (default 16)')
    .option('--part-kb <kb>', 'largest trace PATCH (default 4)')
    .option('--artifact-kb <kb>', 'size of each artifacts zip; 0 = none (default 64)')
    .option('--rate-kbps <kb>', 'trace bytes per second per runner; 0 = unlimited (default 0)')
    .option('--update-ms <ms>', 'pause between trace ticks (real runner: 3000; default 250)')
    .option('--poll-ms <ms>', 'pause after an empty poll (real runner: 3000; default 1000)')
    .option('--fail-rate <0..1>', 'share of builds whose script fails (default 0)')
    .option('--faults <list>', 'faults to inject, e.g. "wrong_range,drop_trace=0.3" or "all" (rate default 0.1)')
    .option('--tags <list>', 'tags of the runners (comma-separated)')
    .option('--runner-tokens <list>', 'act as these already registered runners (comma-separated tokens) instead of registering')
    .option('--duration <s>', 'stop after this many seconds')
    .option('--no-verify', 'do not compare traces and artifacts after each build')
    .option('--shared', "register as shared runners and take any project's builds (default, when the fleet creates its builds: runners of its project, taking only its builds)")
    .option('--json', 'print the final status as JSON instead of the summary')
    .option('--export-scenario <file>', 'write the effective scenario as JSON before starting');
}

/**
 * The flags of `jobscope simulate <args>` as the command sees them; a bad flag is a UsageError.
 * Parses in-process (no exit, no output), so usage can be checked without starting a process.
 */
export function parseSimulateArgs(args: string[]): Flags {
  const cmd = withOptions(new Command('simulate'))
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} });
  try {
    cmd.parse(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new UsageError(err.message.replace(/^error: /, ''));
    throw err;
  }
  return cmd.opts<Flags>();
}

/** Runs one simulation to its exit code: 0 ok, 1 protocol broken, 2 usage, 3 the simulator failed. */
export async function runSimulate(flags: Flags, deps: SimulateDeps, stderr: (text: string) => void = (t) => process.stderr.write(t)): Promise<number> {
  try {
    return await simulate(flags, deps);
  } catch (err) {
    if (err instanceof UsageError) {
      stderr(`jobscope simulate: ${err.message}\n`);
      return 2;
    }
    // Not 1: that code means the server broke the protocol.
    stderr(`jobscope simulate: the simulator itself failed: ${(err as Error).stack ?? String(err)}\n`);
    return 3;
  }
}

export function simulateCommand(program: Command, deps: SimulateDeps): Command {
  const cmd = withOptions(program.command('simulate')).action(async (flags: Flags) => {
    process.exitCode = await runSimulate(flags, deps);
  });
  // Commander exits 1 on a bad flag; a usage error is 2 here, so that 1 only ever means "protocol broken".
  cmd.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  return cmd;
}
