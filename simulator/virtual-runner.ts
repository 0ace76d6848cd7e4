// One virtual runner: registers, polls, and runs each build it gets as gitlab-ci-multi-runner 1.11.5
// does (shared/spec/real-runner-requests.md) — PUT running, the trace in PATCH parts, 416 → resend
// from the server's Range, 404 → full-trace PUTs, Build-Status canceled → PUT failed and no upload,
// the artifacts zip streamed chunked, the final PUT with the full trace — while committing the
// faults it was told to, and checking every answer for signs that the server broke the protocol.
import crypto from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Faults, RunnerCounters } from '../contract/simulator.ts';
import type { ResolvedBehaviour } from './behaviour.ts';
import { FaultPlan } from './faults.ts';
import { header, type Answer, type HttpClient } from './http-client.ts';
import { jobLog } from './job-log.ts';
import { archiveStream } from './artifact.ts';
import { Prng } from '../common/prng.ts';
import { controlApiBase, jsonOf, rangeEnd, RunnerApi, type BuildPayload } from './runner-client.ts';
import { emptyCounters, type FleetStats } from './stats.ts';

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

/** What the fleet shares with its runners. */
export interface FleetLink {
  client: HttpClient;
  target: string;
  registrationToken?: string;
  adminToken?: string;
  verify: boolean;
  stats: FleetStats;
  signal: AbortSignal;
  /** Records who took a build; false when another runner already had it (handed out twice). */
  claim(buildId: number, runner: string): boolean;
  /** Whether the fleet still wants builds (its target not yet taken). */
  wantsBuilds(): boolean;
}

type Outcome = 'success' | 'failed' | 'canceled' | 'abandoned';
type Tick = 'ok' | 'abort' | 'retry' | 'put';

const HOST = os.hostname();

export class VirtualRunner {
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

  private async runBuild(build: BuildPayload): Promise<Outcome> {
    const b = this.spec.behaviour;
    this.buildId = build.id;
    this.set('running', `running build ${build.id}`);
    const bp = this.prng.fork(build.id);
    const fails = bp.chance(b.failRate);
    const when = build.options?.artifacts?.when ?? 'on_success';
    const upload = b.artifactBytes > 0 && (when === 'always' || (when === 'on_failure' ? fails : !fails));
    const artifactsName = (build.options?.artifacts?.name ?? 'artifacts').replace(/[\\/]/g, '_') || 'artifacts';
    const trace = jobLog(
      {
        buildId: build.id,
        projectId: build.project_id,
        sha: String(build.sha ?? '00000000'),
        ref: String(build.ref ?? 'master'),
        commands: typeof build.commands === 'string' ? build.commands : '',
        runnerName: this.name,
        runnerToken: this.token!,
        host: HOST,
        targetBytes: b.traceBytes,
        fails,
        artifacts: upload ? { name: artifactsName, bytes: b.artifactBytes } : null,
      },
      bp,
    );
    const job = new BuildRun(this, this.link, this.api, build, trace, bp, this.faults);
    return job.run(fails, upload, `${artifactsName}.zip`);
  }

  /** Used by BuildRun. */
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

/** One build, from the PUT running to the verification. */
class BuildRun {
  private acked = 0;
  private produced = 0;
  private mode: 'patch' | 'put' = 'patch';
  private readonly id: number;
  private readonly token: string;

  constructor(
    private readonly r: VirtualRunner,
    private readonly link: FleetLink,
    private readonly api: RunnerApi,
    private readonly build: BuildPayload,
    private readonly trace: Buffer,
    private readonly prng: Prng,
    private readonly faults: FaultPlan,
  ) {
    this.id = build.id;
    this.token = build.token;
  }

  private get b() {
    return this.r.spec.behaviour;
  }

  private update(state: string | undefined, trace?: Buffer) {
    return this.api.update(this.id, this.r.token!, state, trace);
  }

  private patch(start: number, end: number, body: Buffer, fault: string | null, extra: Parameters<RunnerApi['patchTrace']>[4] = {}) {
    if (fault) {
      this.r.counters.faults++;
      this.link.stats.faults.injected(fault);
    }
    return this.api.patchTrace(this.id, this.token, `${start}-${end}`, body, { fault, ...extra });
  }

  private sent(n: number): void {
    this.r.counters.trace_bytes += n;
    this.link.stats.traceBytes(n);
  }

  async run(fails: boolean, upload: boolean, filename: string): Promise<Outcome> {
    const total = this.trace.length;
    const dies = this.faults.forBuild('die');
    const badToken = this.faults.forBuild('invalid_token');
    const dropUpload = upload && this.faults.forBuild('drop_upload');
    const parts = Math.max(1, Math.ceil(total / this.b.partBytes));
    const dieAt = dies ? this.prng.int(0, parts - 1) : -1;

    const first = await this.update('running');
    if (first.status === 404 || first.status === 403) return this.abort(`the server ended build ${this.id} (${first.status}) before it started`);
    if (first.status !== 200) this.r.noteFailed('update', first);

    if (badToken) await this.probeInvalidTokens();

    let part = 0;
    while (this.produced < total) {
      if (this.link.signal.aborted) return this.stop();
      if (part > 0) await this.r.wait(this.pace(Math.min(this.b.partBytes, total - this.produced)));
      this.produced = Math.min(total, this.produced + this.b.partBytes);
      if (part === dieAt) {
        this.r.counters.faults++;
        this.link.stats.faults.injected('die');
        this.link.stats.faults.record('die', 0);
        return 'abandoned';
      }
      part++;
      this.r.note('running', `running build ${this.id} (trace ${Math.floor((this.produced / total) * 100)}%)`, this.produced / total);
      const t = await this.tick(this.produced);
      if (t === 'abort') return this.abort(`build ${this.id} canceled by the server`);
    }
    // Parts that failed are sent again on the following ticks, as the runner does.
    for (let i = 0; this.mode === 'patch' && this.acked < total && i < 20; i++) {
      if (this.link.signal.aborted) return this.stop();
      await this.r.wait(Math.max(10, this.b.updateMs));
      const t = await this.tick(total);
      if (t === 'abort') return this.abort(`build ${this.id} canceled by the server`);
    }
    if (this.mode === 'patch' && this.acked < total) this.r.noteError('trace_incomplete');

    if (this.link.verify && this.mode === 'patch' && this.acked > 0) await this.verifyTrace(this.trace.subarray(0, this.acked), 'incremental');

    let state: 'success' | 'failed' = fails ? 'failed' : 'success';
    let uploaded: { sha256: string; size: number } | undefined;
    if (upload) {
      uploaded = await this.upload(filename, dropUpload);
      if (!uploaded) state = 'failed';
    }

    this.r.note('finishing', `finishing build ${this.id} (${state})`, 1);
    const final = await this.finalPut(state);
    if (final !== 200) return final === 404 || final === 403 ? 'canceled' : 'failed';
    if (this.link.verify) {
      this.r.note('verifying', `verifying build ${this.id}`, 1);
      await this.verifyTrace(this.trace, 'final');
      if (uploaded) await this.verifyArtifact(uploaded);
    }
    return state;
  }

  private pace(bytes: number): number {
    const byRate = this.b.rate > 0 ? (bytes / this.b.rate) * 1000 : 0;
    return Math.max(this.b.updateMs, byRate);
  }

  /** One tick: send everything from the acknowledged length to `end`, maybe with a fault. */
  private async tick(end: number): Promise<Tick> {
    if (this.mode === 'put') {
      const a = await this.update('running', this.trace.subarray(0, end));
      if (a.status === 404 || a.status === 403) return 'abort';
      if (a.status !== 200) {
        this.r.noteFailed('update', a);
        return 'retry';
      }
      this.sent(end);
      return 'ok';
    }
    const from = this.acked;
    if (from >= end) return 'ok';
    const body = this.trace.subarray(from, end);
    let fault = this.faults.forPart();
    if (fault === 'stale_range' && from === 0) fault = 'wrong_range';
    if (fault === 'out_of_order' && end - from < 2) fault = null;
    let a: Answer;
    switch (fault) {
      case 'wrong_range': {
        const start = from + 1 + this.prng.int(0, 4096);
        a = await this.patch(start, start + body.length, body, fault);
        break;
      }
      case 'stale_range': {
        const start = from - this.prng.int(1, Math.min(from, this.b.partBytes));
        a = await this.patch(start, end, this.trace.subarray(start, end), fault);
        break;
      }
      case 'out_of_order': {
        const mid = from + Math.floor((end - from) / 2);
        a = await this.patch(mid, end, this.trace.subarray(mid, end), fault);
        break;
      }
      case 'drop_trace':
        a = await this.patch(from, end, body, fault, { dropAfterBytes: Math.floor(body.length / 2) });
        break;
      case 'slow_dribble':
        a = await this.patch(from, end, body, fault, { dribble: { bytes: Math.max(1, Math.ceil(body.length / 8)), delayMs: 10 } });
        break;
      default:
        a = await this.patch(from, end, body, null);
    }
    if (fault && fault !== 'duplicate_part') this.link.stats.faults.record(fault, a.status);
    if (fault === 'drop_trace') {
      // The socket went before the body was complete; the part is sent again on the next tick.
      if (a.status !== 0) return this.answer(a, from, end, true);
      return 'retry';
    }
    const t = await this.answer(a, fault === 'wrong_range' || fault === 'out_of_order' || fault === 'stale_range' ? -1 : from, end, true);
    if (fault === 'duplicate_part' && t === 'ok') {
      this.r.counters.faults++;
      this.link.stats.faults.injected(fault);
      const dup = await this.api.patchTrace(this.id, this.token, `${from}-${end}`, body, { fault });
      this.link.stats.faults.record(fault, dup.status);
      return this.answer(dup, -1, end, false);
    }
    return t;
  }

  /**
   * Acts on a PATCH answer as the runner does, and checks it. `from` is the start actually sent
   * (-1 for a deliberately wrong start, which must not be accepted).
   */
  private async answer(a: Answer, from: number, end: number, mayResend: boolean): Promise<Tick> {
    const status = header(a, 'build-status');
    if (status === 'canceled' || status === 'failed') return 'abort';
    const x = rangeEnd(header(a, 'range'));
    if (a.status === 202) {
      if (from < 0) {
        this.r.noteViolation('ack_mismatch', this.id, `a trace part with a wrong Content-Range start was accepted (202, Range ${header(a, 'range')}); it must be 416`);
      } else if (x !== end) {
        this.r.noteViolation('ack_mismatch', this.id, `sent bytes ${from}-${end} and got 202 with Range ${header(a, 'range') ?? '(none)'}; expected 0-${end}`);
      } else this.sent(end - from);
      this.acked = x ?? end;
      return 'ok';
    }
    if (a.status === 416) {
      this.r.counters.status_416++;
      if (x === undefined) {
        this.r.noteError('416_without_range');
        return 'retry';
      }
      if (x < this.acked) {
        this.r.noteViolation('trace_lost', this.id, `the server had acknowledged 0-${this.acked} and now says 0-${x}: ${this.acked - x} acknowledged bytes are gone`);
      }
      if (x > this.produced) {
        // More than the runner ever sent: it falls back to a full PUT, and the server made up bytes.
        this.r.noteViolation('trace_lost', this.id, `the server says the trace is 0-${x} but only ${this.produced} bytes were sent`);
        this.mode = 'put';
        return this.tick(end);
      }
      this.acked = x;
      if (x === end) return 'ok';
      if (!mayResend) return 'retry';
      const again = await this.patch(x, end, this.trace.subarray(x, end), null);
      if (again.status === 416) {
        this.r.counters.status_416++;
        this.r.noteError('second_416');
        const y = rangeEnd(header(again, 'range'));
        if (y !== undefined && y < this.acked) this.r.noteViolation('trace_lost', this.id, `416 said 0-${this.acked}, the next one 0-${y}`);
        if (y !== undefined && y <= this.produced) this.acked = y;
        return 'retry';
      }
      return this.answer(again, x, end, false);
    }
    if (a.status === 404) {
      // "incremental trace not available": full trace in every tick's PUT from now on.
      this.mode = 'put';
      return this.tick(end);
    }
    if (a.status === 403) return 'abort';
    this.r.noteFailed('trace', a);
    return 'retry';
  }

  /** Requests with a wrong build token and a wrong runner token: each must be refused (403). */
  private async probeInvalidTokens(): Promise<void> {
    const bogus = crypto.randomBytes(10).toString('hex');
    const fault = 'invalid_token';
    for (let i = 0; i < 2; i++) {
      this.r.counters.faults++;
      this.link.stats.faults.injected(fault);
    }
    const p = await this.api.patchTrace(this.id, bogus, `0-0`, Buffer.alloc(0), { fault });
    this.link.stats.faults.record(fault, p.status);
    if (p.status >= 200 && p.status < 300) this.r.noteViolation('accepted_invalid_token', this.id, `PATCH trace with a wrong Build-Token answered ${p.status}`);
    const u = await this.api.update(this.id, bogus, 'running', undefined, { fault });
    this.link.stats.faults.record(fault, u.status);
    if (u.status >= 200 && u.status < 300) this.r.noteViolation('accepted_invalid_token', this.id, `PUT build with a wrong runner token answered ${u.status}`);
  }

  /** Up to 3 attempts, as the runner: 201 ok; 403 and 413 end it; others are retried. undefined = failed. */
  private async upload(filename: string, dropFirst: boolean): Promise<{ sha256: string; size: number } | undefined> {
    const spec = { seed: this.r.spec.seed, bytes: this.b.artifactBytes, text: `artifacts of build ${this.id} by ${this.r.name}\n` };
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (this.link.signal.aborted) return undefined;
      const source = archiveStream(spec);
      // Only a verification compares the digest: ~60 µs of SHA-256 a 64 KiB build otherwise spent for nothing.
      const hash = this.link.verify ? crypto.createHash('sha256') : undefined;
      let size = 0;
      const tapped = (function* () {
        for (const chunk of source) {
          hash?.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      })();
      const drop = dropFirst && attempt === 1;
      const fault = drop ? 'drop_upload' : null;
      if (drop) {
        this.r.counters.faults++;
        this.link.stats.faults.injected('drop_upload');
      }
      const expected = this.b.artifactBytes;
      this.r.note('uploading', `uploading artifacts of build ${this.id}${attempt > 1 ? ` (attempt ${attempt})` : ''}`, 0);
      const a = await this.api.upload(this.id, this.token, filename, tapped, this.build.options?.artifacts?.expire_in || this.b.expireIn || undefined, {
        fault,
        dropAfterBytes: drop ? Math.max(1, Math.floor(expected / 2)) : undefined,
        onProgress: (n) => this.r.note('uploading', `uploading artifacts of build ${this.id}`, Math.min(1, n / Math.max(1, expected))),
        keepBytes: 64 * 1024,
      });
      source.return(undefined);
      if (fault) this.link.stats.faults.record(fault, a.status);
      if (a.status === 201) {
        this.r.counters.artifact_bytes += size;
        return { sha256: hash?.digest('hex') ?? '', size };
      }
      // A drop we caused ourselves is the fault working, not an error of the run.
      if (!drop || a.status !== 0) this.r.noteFailed('upload', a);
      if (a.status === 403 || a.status === 413) return undefined;
      if (attempt < 3) await this.r.wait(Math.min(1000, Math.max(50, this.b.updateMs)));
    }
    return undefined;
  }

  /** The final PUT with the full trace, repeated on anything but 200/403/404 (bounded here). */
  private async finalPut(state: 'success' | 'failed'): Promise<number> {
    for (let i = 0; i < 10; i++) {
      const a = await this.update(state, this.trace);
      if (a.status === 200 || a.status === 403 || a.status === 404) {
        if (a.status === 200 && this.mode === 'put') this.sent(this.trace.length);
        return a.status;
      }
      this.r.noteFailed('final_update', a);
      await this.r.wait(Math.max(50, Math.min(3000, this.b.updateMs)));
    }
    return 0;
  }

  private async abort(why: string): Promise<Outcome> {
    this.r.note('finishing', why, 1);
    await this.update('failed', this.trace.subarray(0, this.produced));
    return 'canceled';
  }

  private async stop(): Promise<Outcome> {
    await this.update('failed', this.trace.subarray(0, this.produced));
    return 'failed';
  }

  private async verifyTrace(expected: Buffer, phase: string): Promise<void> {
    if (!this.link.adminToken) return;
    const a = await this.link.client.send({
      method: 'GET',
      url: `${controlApiBase(this.link.target)}/builds/${this.id}/trace`,
      headers: { 'PRIVATE-TOKEN': this.link.adminToken },
      runner: `${this.r.name}/verify`,
      buildId: this.id,
      keepBytes: 4096,
      digest: true,
    });
    if (a.status !== 200) {
      this.r.noteError(`verify_http_${a.status}`);
      return;
    }
    const want = crypto.createHash('sha256').update(expected).digest('hex');
    if (a.sha256 !== want || a.bodySize !== expected.length) {
      this.r.noteViolation(
        'trace_mismatch',
        this.id,
        `${phase} trace differs: the server holds ${a.bodySize} bytes (sha256 ${a.sha256.slice(0, 12)}…), the runner sent ${expected.length} (sha256 ${want.slice(0, 12)}…)`,
      );
    } else this.link.stats.tracesVerified++;
  }

  private async verifyArtifact(uploaded: { sha256: string; size: number }): Promise<void> {
    const a = await this.api.download(this.id, this.token, { keepBytes: 4096, digest: true });
    if (a.status !== 200) {
      this.r.noteViolation('artifact_mismatch', this.id, `the uploaded archive could not be downloaded back: ${a.status || a.error}`);
      return;
    }
    if (a.sha256 !== uploaded.sha256 || a.bodySize !== uploaded.size) {
      this.r.noteViolation(
        'artifact_mismatch',
        this.id,
        `downloaded ${a.bodySize} bytes (sha256 ${a.sha256.slice(0, 12)}…) but uploaded ${uploaded.size} (sha256 ${uploaded.sha256.slice(0, 12)}…)`,
      );
    } else this.link.stats.artifactsVerified++;
  }
}
