// A fleet: N virtual runners in groups (tags, behaviour, faults), each with its own seeded PRNG,
// sharing one HTTP client and journal; optionally creating its builds first through Jobscope's
// control API. A fleet that creates its builds registers its runners with its project's runners
// token (GitLab's project runners), so they take that project's builds only, unless `shared`; it
// ends when its own builds are all taken (or when stopped), says what became of them, and whether
// the server broke the protocol on the way.
import type { Faults, FleetStatus, OwnBuilds } from '../contract/simulator.ts';
import type { ResolvedBehaviour } from './behaviour.ts';
import { HttpClient, type OutboundCheck } from './http-client.ts';
import type { Journal } from './journal.ts';
import { Prng } from '../common/prng.ts';
import { controlApiBase, jsonOf } from './runner-client.ts';
import { FleetStats, totalsOf } from './stats.ts';
import type { FleetLink } from './fleet-link.ts';
import { VirtualRunner } from './virtual-runner.ts';

export interface RunnerGroupSpec {
  name: string;
  count: number;
  tags: string[];
  runUntagged: boolean;
  tokens?: string[];
  behaviour: ResolvedBehaviour;
  faults: Faults;
}

export interface FleetOptions {
  target: string;
  registrationToken?: string;
  adminToken?: string;
  /** Compare traces and artifacts after each build (needs adminToken and a Jobscope target). */
  verify: boolean;
  seed: number;
  /** Builds to finish; null = until stopped. */
  builds: number | null;
  /** Create `builds` builds through the control API first. */
  createBuilds: boolean;
  buildTemplate?: { commands?: string; tag_list?: string[]; name?: string };
  groups: RunnerGroupSpec[];
  journal: Journal;
  requestTimeoutMs?: number;
  /** Unregister self-registered runners at the end (as `gitlab-ci-multi-runner unregister`). */
  unregister?: boolean;
  /** Which hosts may be called (see HttpClient); default: any. */
  outbound?: OutboundCheck;
  /** Quote the start of an unexpected answer in setup errors; off where the target may be somebody's internal page. */
  quoteBodies?: boolean;
  /** Register as shared runners (any project's builds) even when the fleet creates its builds. */
  shared?: boolean;
  /** How often the fleet asks the server what became of its own builds, ms (default 5000). */
  ownCheckMs?: number;
}

/** The project a fleet creates its builds in (made once, reused by later fleets). */
export const FLEET_PROJECT = 'simulator';

interface FleetProject {
  id: number;
  name: string;
  runners_token: string;
}

export const DEFAULT_COMMANDS = [
  'echo "Building $CI_BUILD_REF_NAME"',
  'npm ci',
  'npm run build',
  'npm test',
  'mkdir -p out',
  'cp -r dist out/',
].join('\n');

/** The control API body that creates a fleet's builds (bench/simulator.ts's bare loop creates the same). */
export function buildsBody(count: number, t: NonNullable<FleetOptions['buildTemplate']>, withArtifacts: boolean) {
  return {
    name: t.name ?? 'simulated',
    commands: t.commands ?? DEFAULT_COMMANDS,
    ...(t.tag_list?.length ? { tag_list: t.tag_list } : {}),
    options: withArtifacts ? { artifacts: { paths: ['out/'], name: 'sim-artifacts', expire_in: '1 week' } } : {},
    count,
  };
}

let nextFleetId = 1;

export class Fleet {
  readonly id = nextFleetId++;
  readonly stats = new FleetStats();
  readonly runners: VirtualRunner[] = [];
  state: FleetStatus['state'] = 'idle';
  message = '';
  startedAt = 0;
  finishedAt = 0;
  private readonly controller = new AbortController();
  private readonly client: HttpClient;
  private readonly owners = new Map<number, string>();
  private taken = 0;
  private done: Promise<void> = Promise.resolve();
  private project: FleetProject | null = null;
  /** The ids of the builds this fleet created; null when it created none. */
  private own: Set<number> | null = null;
  private ownTaken = 0;
  private othersTaken = 0;
  /** What became of the own builds, as the server last said (taken ones count as running until then). */
  private ownStatus: Omit<OwnBuilds, 'created' | 'taken'> | null = null;

  constructor(readonly opts: FleetOptions) {
    this.client = new HttpClient(opts.journal, {
      timeoutMs: opts.requestTimeoutMs ?? 30_000,
      outbound: opts.outbound,
      onExchange: (x, a) => {
        this.stats.request();
        const r = this.byName.get(x.runner);
        if (r) r.counters.requests++;
        void a;
      },
    });
    const prng = new Prng(opts.seed);
    for (const g of opts.groups) {
      for (let i = 0; i < g.count; i++) {
        const name = g.count === 1 && opts.groups.length > 1 ? g.name : `${g.name}-${i + 1}`;
        const runner = new VirtualRunner(
          {
            name,
            tags: g.tags,
            runUntagged: g.runUntagged,
            token: g.tokens?.[i],
            behaviour: g.behaviour,
            faults: g.faults,
            seed: Math.floor(prng.next() * 4294967296),
          },
          this.link(),
        );
        this.runners.push(runner);
      }
    }
    this.byName = new Map(this.runners.map((r) => [r.name, r]));
  }

  private readonly byName: Map<string, VirtualRunner>;

  private link(): FleetLink {
    const link: FleetLink = {
      client: this.client,
      target: this.opts.target,
      adminToken: this.opts.adminToken,
      verify: this.opts.verify && this.opts.adminToken !== undefined,
      stats: this.stats,
      signal: this.controller.signal,
      claim: (id, runner) => {
        if (this.owners.has(id)) return false;
        this.owners.set(id, runner);
        this.taken++;
        if (this.own?.has(id)) this.ownTaken++;
        else if (this.own) this.othersTaken++;
        return true;
      },
      wantsBuilds: () => this.wantsBuilds(),
    };
    // Read when a runner registers: the project's runners token is known once the builds are made.
    Object.defineProperty(link, 'registrationToken', { get: () => this.registrationToken, enumerable: true });
    return link;
  }

  /** The token runners register with: the fleet's project's when it made one and is not shared. */
  get registrationToken(): string | undefined {
    return this.project && !this.opts.shared ? this.project.runners_token : this.opts.registrationToken;
  }

  /** A fleet that created its builds wants builds until each was taken (by its runners, or by others: then none is pending). */
  private wantsBuilds(): boolean {
    if (this.own) return this.ownTaken < this.own.size && this.ownStatus?.pending !== 0;
    return this.opts.builds === null || this.taken < this.opts.builds;
  }

  get protocolBroken(): boolean {
    return this.stats.violationCount > 0;
  }

  /** Creates the builds (when asked) and sets the runners going; `finished` resolves at the end. */
  async start(): Promise<void> {
    this.state = 'running';
    this.startedAt = Date.now();
    if (this.opts.createBuilds && this.opts.builds) {
      this.message = `creating ${this.opts.builds} builds`;
      await this.createBuilds(this.opts.builds);
    }
    this.message = 'running';
    this.launched = true;
    const running = Promise.all(this.runners.map((r) => r.run().catch((err: unknown) => this.crashed(r, err))));
    if (this.own) void this.watchOwn(running);
    this.done = running.then(() => this.finish());
  }

  /** Asks the server what became of the own builds until the runners are done, so a fleet whose builds other runners took ends too. */
  private async watchOwn(running: Promise<unknown>): Promise<void> {
    let over = false;
    void running.finally(() => (over = true));
    const every = this.opts.ownCheckMs ?? 5000;
    while (!over && !this.controller.signal.aborted) {
      await new Promise((r) => setTimeout(r, every));
      if (over || this.controller.signal.aborted) return;
      await this.readOwn().catch(() => undefined);
    }
  }

  /** The own builds' statuses, read through the control API (the project's builds, 1000 per page). */
  private async readOwn(): Promise<void> {
    if (!this.own || !this.project) return;
    const counts = { success: 0, failed: 0, canceled: 0, running: 0, pending: 0 };
    const lowest = Math.min(...this.own);
    for (let before: number | undefined; ; ) {
      const page = (await this.control('GET', `/builds?project_id=${this.project.id}&limit=1000${before ? `&before_id=${before}` : ''}`)) as { id: number; status: keyof typeof counts }[];
      for (const b of page) if (this.own.has(b.id) && b.status in counts) counts[b.status]++;
      if (page.length < 1000 || page[page.length - 1]!.id <= lowest) break;
      before = page[page.length - 1]!.id;
    }
    this.ownStatus = counts;
  }

  get finished(): Promise<void> {
    return this.done;
  }

  async stop(): Promise<void> {
    if (this.state === 'running') this.state = 'stopping';
    this.controller.abort();
    await this.done;
    if (!this.launched) {
      this.client.close();
      this.state = 'finished';
    }
  }

  private launched = false;

  private crashed(r: VirtualRunner, err: unknown): void {
    this.stats.error('runner_crash', r.counters);
    r.state = 'stopped';
    r.detail = `stopped by an internal error: ${(err as Error).message}`;
  }

  private async finish(): Promise<void> {
    if (this.opts.unregister !== false) await Promise.all(this.runners.map((r) => r.unregister().catch(() => undefined)));
    // Before the client closes: the summary says what became of the own builds, as the server has them.
    await this.readOwn().catch(() => undefined);
    this.client.close();
    this.finishedAt = Date.now();
    this.message = this.controller.signal.aborted
      ? 'stopped'
      : this.runners.every((r) => r.counters.builds === 0 && r.state === 'stopped' && r.detail.includes('registration'))
        ? 'no runner could register: check the registration token'
        : this.ownSummary() ?? 'all builds done';
    this.state = 'finished';
  }

  /** "all 30 builds done", or what is left of them, and the others taken; undefined when the fleet created none. */
  private ownSummary(): string | undefined {
    const own = this.ownBuilds();
    if (!own) return undefined;
    const done = own.success + own.failed + own.canceled;
    const left = [own.running && `${own.running} still running`, own.pending && `${own.pending} still pending`].filter(Boolean).join(', ');
    const head = done === own.created ? `all ${own.created} of its builds done` : `${done} of its ${own.created} builds done${left ? `, ${left}` : ''}`;
    return this.othersTaken ? `${head}; also took ${this.othersTaken} builds it did not create` : head;
  }

  private ownBuilds(): OwnBuilds | null {
    if (!this.own) return null;
    // Until the server has said, a taken build counts as running and the rest as pending.
    const st = this.ownStatus ?? { success: 0, failed: 0, canceled: 0, running: this.ownTaken, pending: this.own.size - this.ownTaken };
    return { created: this.own.size, taken: this.ownTaken, ...st };
  }

  /** One control API call of the fleet's own (setup, and reading its builds back). */
  private async control(method: string, path: string, body?: unknown): Promise<unknown> {
    const admin = this.opts.adminToken;
    if (!admin) throw new FleetSetupError('creating builds needs the target’s admin token (PRIVATE-TOKEN)');
    const base = controlApiBase(this.opts.target);
    const headers = { 'PRIVATE-TOKEN': admin, 'Content-Type': 'application/json' };
    const a = await this.client.send({ method, url: `${base}${path}`, headers, body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)), runner: 'setup' });
    if (a.status >= 300 || a.status === 0) {
      const quoted = this.opts.quoteBodies === false ? `${a.bodySize} bytes` : a.body.toString('utf8').slice(0, 200);
      throw new FleetSetupError(`${method} ${base}${path} answered ${a.status || a.error}: ${quoted} — is the target a Jobscope server and the admin token right?`);
    }
    return jsonOf<unknown>(a);
  }

  /** Through the control API: the project (made once), then the builds, 1000 per call, whose ids it keeps. */
  private async createBuilds(count: number): Promise<void> {
    const projects = ((await this.control('GET', '/projects?per_page=1000')) ?? []) as FleetProject[];
    this.project = projects.find((p) => p.name === FLEET_PROJECT) ?? ((await this.control('POST', '/projects', { name: FLEET_PROJECT })) as FleetProject);
    const withArtifacts = this.opts.groups.some((g) => g.behaviour.artifactBytes > 0);
    const own = new Set<number>();
    for (let left = count; left > 0; ) {
      const n = Math.min(1000, left);
      const made = (await this.control('POST', `/projects/${this.project.id}/builds`, buildsBody(n, this.opts.buildTemplate ?? {}, withArtifacts))) as { ids: number[] };
      for (const id of made.ids) own.add(id);
      left -= n;
    }
    this.own = own;
  }

  status(): FleetStatus {
    const now = this.finishedAt || Date.now();
    return {
      state: this.state,
      id: this.id,
      target: this.opts.target,
      seed: this.opts.seed,
      builds_target: this.opts.builds,
      started_at: this.startedAt ? new Date(this.startedAt).toISOString() : null,
      finished_at: this.finishedAt ? new Date(this.finishedAt).toISOString() : null,
      duration_s: this.startedAt ? (now - this.startedAt) / 1000 : 0,
      protocol_broken: this.protocolBroken,
      totals: totalsOf(
        this.runners.map((r) => r.counters),
        this.stats,
      ),
      errors_by_kind: { ...this.stats.errorsByKind },
      faults_by_kind: { ...this.stats.faults.byKind },
      fault_answers: structuredClone(this.stats.faults.answers),
      violations: [...this.stats.violations],
      project: this.project?.name ?? null,
      shared: this.opts.shared === true || !this.project,
      own: this.ownBuilds(),
      others_taken: this.othersTaken,
      runners: this.runners.map((r) => ({
        name: r.name,
        runner_id: r.runnerId,
        tags: r.spec.tags,
        state: r.state,
        build_id: r.buildId,
        progress: Math.round(r.progress * 1000) / 1000,
        detail: r.detail,
        counters: { ...r.counters },
      })),
      message: this.message,
    };
  }
}

export class FleetSetupError extends Error {}
