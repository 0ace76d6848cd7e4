// One virtual runner as gitlab-ci-multi-runner 1.11.5 is one (shared/spec/real-runner-requests.md):
// it registers (or uses the token it was given), polls with X-GitLab-Last-Update, backs off as the
// runner does on 403 and errors, hands each build it gets to a BuildRun (build-run.ts), and after a
// build it died in comes back as a new runner. Its state line is what the fleet's status shows.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Faults, RunnerCounters } from '../contract/simulator.ts';
import type { ResolvedBehaviour } from './behaviour.ts';
import { runBuild, type BuildRunner, type Outcome } from './build-run.ts';
import { FaultPlan } from './faults.ts';
import type { FleetLink } from './fleet-link.ts';
import { header, type Answer } from './http-client.ts';
import { Prng } from '../common/prng.ts';
import { jsonOf, RunnerApi, type BuildPayload } from './runner-client.ts';
import { emptyCounters } from './stats.ts';

export interface RunnerSpec {
  name: string;
  tags: string[];
  runUntagged: boolean;
  /** A runner token to use instead of registering. */
  token?: string;
  behaviour: ResolvedBehaviour;
  faults: Faults;
  seed: number;
}

export class VirtualRunner implements BuildRunner {
  state = 'starting';
  buildId: number | null = null;
  progress = 0;
  detail = 'starting';
  runnerId: number | null = null;
  token: string | undefined;
  readonly counters: RunnerCounters = emptyCounters();
  private readonly api: RunnerApi;
  private readonly prng: Prng;
  private readonly faults: FaultPlan;
  private lastUpdate: string | undefined;
  private registered = false;

  constructor(
    readonly spec: RunnerSpec,
    private readonly link: FleetLink,
  ) {
    this.api = new RunnerApi(link.client, link.target, spec.name);
    this.prng = new Prng(spec.seed);
    this.faults = new FaultPlan(spec.faults, this.prng.fork(0xfa17));
    this.token = spec.token;
  }

  get name(): string {
    return this.spec.name;
  }

  private get stopping(): boolean {
    return this.link.signal.aborted;
  }

  private set(state: string, detail: string, progress = 0): void {
    this.state = state;
    this.detail = detail;
    this.progress = progress;
  }

  private async pause(ms: number): Promise<void> {
    if (ms <= 0 || this.stopping) return;
    try {
      await sleep(ms, undefined, { signal: this.link.signal });
    } catch {
      /* stopped */
    }
  }

  private error(kind: string): void {
    this.link.stats.error(kind, this.counters);
  }

  private violation(kind: string, buildId: number | null, message: string): void {
    this.link.stats.violation(kind, this.name, buildId, message);
  }

  /** An answer's error kind: "network" for no answer, else "http_<status>". */
  private failed(what: string, a: Answer): void {
    this.error(a.status === 0 ? `${what}_network` : `${what}_http_${a.status}`);
  }

  async run(): Promise<void> {
    while (!this.stopping) {
      if (!this.token) {
        if (!(await this.register())) {
          if (this.state === 'stopped') return;
          continue;
        }
      }
      if (!this.link.wantsBuilds()) break;
      const build = await this.poll();
      if (!build) continue;
      const outcome = await this.runBuild(build);
      this.counters.builds++;
      this.counters[outcome]++;
      this.link.stats.buildDone();
      this.buildId = null;
      if (outcome === 'abandoned') {
        // The machine died mid-build; it comes back as a new runner, as a re-provisioned host would.
        this.set('dead', `died during build ${build.id}; restarting`);
        await this.pause(Math.max(50, this.spec.behaviour.pollMs));
        if (this.registered) this.token = undefined;
        this.lastUpdate = undefined;
      }
    }
    this.set('stopped', 'stopped');
  }

  /** Unregisters when this runner registered itself (the runner's `unregister`). */
  async unregister(): Promise<void> {
    if (!this.registered || !this.token) return;
    await this.api.unregister(this.token);
  }

  private async register(): Promise<boolean> {
    const reg = this.link.registrationToken;
    if (!reg) {
      this.set('stopped', 'no runner token and no registration token: give one of them');
      this.error('no_token');
      return false;
    }
    this.set('registering', 'registering');
    const a = await this.api.register(reg, { description: this.name, tagList: this.spec.tags.join(', '), runUntagged: this.spec.runUntagged });
    const body = a.status === 201 ? jsonOf<{ id?: number; token?: string }>(a) : undefined;
    if (body && typeof body.token === 'string') {
      this.token = body.token;
      this.runnerId = typeof body.id === 'number' ? body.id : null;
      this.registered = true;
      this.set('idle', 'registered');
      return true;
    }
    this.failed('register', a);
    if (a.status === 403) {
      this.set('stopped', 'registration refused (403): check the registration token');
      return false;
    }
    this.set('registering', `registration failed (${a.status || a.error}); retrying`);
    await this.pause(Math.max(100, this.spec.behaviour.pollMs));
    return false;
  }

  private async poll(): Promise<BuildPayload | undefined> {
    const { pollMs } = this.spec.behaviour;
    this.set('polling', 'polling');
    const a = await this.api.poll(this.token!, this.lastUpdate);
    const lu = header(a, 'x-gitlab-last-update');
    if (lu !== undefined) this.lastUpdate = lu;
    if (a.status === 201) {
      const build = jsonOf<BuildPayload>(a);
      if (!build || typeof build.id !== 'number' || typeof build.token !== 'string') {
        // The real runner drops such a build: the server already marked it running, so it is lost.
        this.error('bad_build_json');
        await this.pause(pollMs);
        return undefined;
      }
      if (!this.link.claim(build.id, this.name)) {
        this.violation('double_handout', build.id, `build ${build.id} was handed out again, to ${this.name}`);
        return undefined;
      }
      return build;
    }
    if (a.status === 204 || a.status === 404) {
      this.counters.polls_empty++;
      this.set('idle', 'no build pending');
      await this.pause(pollMs);
      return undefined;
    }
    this.failed('poll', a);
    if (a.status === 403) {
      // run-single sleeps 300 s after a 403; a fleet re-registers instead when it registered itself.
      this.set('idle', 'poll forbidden (403): runner token unknown to the server');
      if (this.registered) this.token = undefined;
      await this.pause(Math.max(pollMs, 1000));
      return undefined;
    }
    this.set('idle', `poll failed (${a.status || a.error})`);
    await this.pause(Math.max(pollMs, 100));
    return undefined;
  }

  private runBuild(build: BuildPayload): Promise<Outcome> {
    this.buildId = build.id;
    this.set('running', `running build ${build.id}`);
    return runBuild(this, this.link, this.api, build, this.prng.fork(build.id), this.faults);
  }

  // What a BuildRun reports through its runner (BuildRunner).
  note(state: string, detail: string, progress = 0): void {
    this.set(state, detail, progress);
  }
  noteError(kind: string): void {
    this.error(kind);
  }
  noteFailed(what: string, a: Answer): void {
    this.failed(what, a);
  }
  noteViolation(kind: string, buildId: number, message: string): void {
    this.violation(kind, buildId, message);
  }
  wait(ms: number): Promise<void> {
    return this.pause(ms);
  }
}
