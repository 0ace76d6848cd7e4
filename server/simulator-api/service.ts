// The simulator as the simulator API (/api/app/sim) sees it: one journal, at most one fleet running at a time (the last
// one kept for its status and scenario), and the runner console. Targets this server by default.
import type { FleetStatus, Scenario, StartFleet } from '../../contract/simulator.ts';
import { ApiError, badRequest, conflict } from '../http/errors.ts';
import { safeEqual } from '../auth/tokens.ts';
import { refuseControlChars } from '../outbound/control-chars.ts';
import type { Service } from '../lifecycle.ts';
import { Fleet, FleetSetupError } from '../../simulator/fleet.ts';
import { HttpClient, type OutboundCheck } from '../../simulator/http-client.ts';
import type { OutboundPolicy } from '../outbound/policy.ts';
import { refuseOutbound } from '../outbound/guard.ts';
import { Journal } from '../../simulator/journal.ts';
import { RunnerConsole } from '../../simulator/console.ts';
import { exportScenario, groupsOf, parseScenario, ScenarioError, scenarioOfForm } from '../../simulator/scenario.ts';

export interface SimulatorServiceOptions {
  journalEntries: number;
  journalBodyBytes: number;
  /** This server's own base URL (known once it listens). */
  selfUrl(): string;
  registrationToken: string;
  adminToken: string;
  /** Which other servers the console and fleets may call. */
  policy(): OutboundPolicy;
}

export function checkTarget(url: string): string {
  refuseControlChars({ target_url: url });
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest(`target_url "${url}" is not a URL; give e.g. http://127.0.0.1:8090`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badRequest('target_url must be http:// or https://');
  return url.replace(/\/+$/, '');
}

/** Scheme, host and port of a URL, or null when it is not one. */
function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export class SimulatorService {
  readonly journal: Journal;
  fleet: Fleet | null = null;
  scenario: Scenario | null = null;
  private consoleSession: RunnerConsole | null = null;
  private readonly consoleClient: HttpClient;

  constructor(private readonly opts: SimulatorServiceOptions) {
    this.journal = new Journal({ capacity: opts.journalEntries, bodyBytes: opts.journalBodyBytes });
    this.consoleClient = new HttpClient(this.journal, { timeoutMs: 30_000, maxSockets: 8, outbound: this.outbound });
  }

  /** This server is always callable; another one as the outbound policy says, at the address it checked. */
  private readonly outbound: OutboundCheck = async (url) => {
    const policy = this.opts.policy();
    if (policy.open || this.isHome(url.href)) return undefined;
    await policy.check(url.hostname);
    return policy.lookup;
  };

  /** A 403 naming the setting when `target` is another server the policy refuses. */
  async refuseTarget(target: string | undefined): Promise<void> {
    if (!this.isHome(target)) await refuseOutbound(this.opts.policy(), 'target_url', target!);
  }

  get console(): RunnerConsole {
    this.consoleSession ??= new RunnerConsole(this.consoleClient, this.opts.selfUrl(), this.opts.policy().open);
    return this.consoleSession;
  }

  get registrationToken(): string {
    return this.opts.registrationToken;
  }

  /** A target that is this server (absent, or the same origin as its own URL). */
  isHome(target: string | undefined): boolean {
    return target === undefined || originOf(target) === originOf(this.opts.selfUrl());
  }

  /**
   * This server's own tokens are only ever sent to this server: one given for another target is
   * refused (the UI prefills this server's registration token; a person who types another target
   * and keeps it would otherwise hand it over).
   */
  refuseOwnTokens(target: string | undefined, given: { field: string; value: string | undefined }[]): void {
    if (this.isHome(target)) return;
    const own = [this.opts.registrationToken, this.opts.adminToken];
    for (const g of given) {
      if (g.value !== undefined && own.some((t) => safeEqual(g.value, t))) {
        throw badRequest(`${g.field}: that is this server's own token, which is only sent to this server; give the one ${new URL(target!).host} issued`);
      }
    }
  }

  async start(form: StartFleet): Promise<FleetStatus> {
    if (this.fleet && (this.fleet.state === 'running' || this.fleet.state === 'stopping')) {
      throw conflict('a fleet is running; stop it first (POST /api/app/sim/fleet/stop)');
    }
    let scenario: Scenario;
    try {
      scenario = form.scenario ? parseScenario(form.scenario) : scenarioOfForm(form);
    } catch (err) {
      if (err instanceof ScenarioError) throw badRequest(err.message);
      throw err;
    }
    refuseControlChars({ admin_token: form.admin_token, registration_token: form.registration_token });
    const given = form.target_url ? checkTarget(form.target_url) : undefined;
    this.refuseOwnTokens(given, [
      { field: 'admin_token', value: form.admin_token },
      { field: 'registration_token', value: form.registration_token },
    ]);
    await this.refuseTarget(given);
    const self = this.isHome(given);
    const target = given ?? this.opts.selfUrl();
    const adminToken = form.admin_token ?? (self ? this.opts.adminToken : undefined);
    const builds = form.builds ?? scenario.builds ?? null;
    const fleet = new Fleet({
      target,
      registrationToken: form.registration_token ?? (self ? this.opts.registrationToken : undefined),
      adminToken,
      verify: scenario.verify ?? adminToken !== undefined,
      seed: form.seed ?? scenario.seed ?? 1,
      builds,
      createBuilds: (scenario.create_builds ?? true) && adminToken !== undefined && (builds ?? 0) > 0,
      buildTemplate: scenario.build_template,
      groups: groupsOf(scenario),
      journal: this.journal,
      outbound: this.outbound,
      quoteBodies: self || this.opts.policy().open,
      shared: form.shared ?? scenario.shared,
    });
    if (!fleet.runners.some((r) => r.spec.token) && !fleet.opts.registrationToken) {
      throw badRequest('the runners need a registration_token (or runner tokens in the scenario) for a target other than this server');
    }
    try {
      await fleet.start();
    } catch (err) {
      await fleet.stop().catch(() => undefined);
      if (err instanceof FleetSetupError) throw new ApiError(400, `400 (Bad request) ${err.message}`);
      throw err;
    }
    this.fleet = fleet;
    this.scenario = scenario;
    return fleet.status();
  }

  async stop(): Promise<FleetStatus | null> {
    if (!this.fleet) return null;
    await this.fleet.stop();
    return this.fleet.status();
  }

  status(): FleetStatus {
    if (this.fleet) return this.fleet.status();
    return {
      state: 'idle', id: null, target: null, seed: null, builds_target: null, started_at: null, finished_at: null, duration_s: 0,
      protocol_broken: false,
      totals: { builds_done: 0, success: 0, failed: 0, canceled: 0, abandoned: 0, trace_bytes: 0, artifact_bytes: 0, requests: 0, status_416: 0, traces_verified: 0, artifacts_verified: 0, faults_injected: 0 },
      errors_by_kind: {}, faults_by_kind: {}, fault_answers: {}, violations: [], runners: [], message: 'no fleet started yet',
      project: null, shared: false, own: null, others_taken: 0,
    };
  }

  exportScenario(): Scenario {
    return exportScenario(this.scenario ?? scenarioOfForm({ runners: 4, builds: 20 }));
  }

  async close(): Promise<void> {
    await this.fleet?.stop().catch(() => undefined);
    this.consoleClient.close();
  }
}

/**
 * The simulator among the app's services. Its own start/stop run fleets, hence this wrapper: nothing
 * starts with the server; it closes once, in drain (before the server stops listening, so a running
 * fleet's runners are not left waiting on in-flight requests), or in stop() if drain never ran.
 */
export class SimulatorLifecycle implements Service {
  readonly name = 'simulator';
  private closing: Promise<void> | null = null;
  constructor(readonly sim: SimulatorService) {}
  start(): void {}
  drain(): Promise<void> {
    return (this.closing ??= this.sim.close());
  }
  stop(): Promise<void> {
    return (this.closing ??= this.sim.close());
  }
}
