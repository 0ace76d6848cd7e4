// One build a virtual runner took, run as gitlab-ci-multi-runner 1.11.5 runs it
// (shared/spec/real-runner-requests.md): PUT running, the trace in PATCH parts with Content-Range,
// 416 → resend from the server's Range, 404 → full-trace PUTs, Build-Status canceled → PUT failed and
// no upload, the artifacts zip streamed chunked, the final PUT with the full trace; committing the
// per-build and per-part faults it was told to, and checking every answer (build-checks.ts).
import crypto from 'node:crypto';
import os from 'node:os';
import type { ResolvedBehaviour } from './behaviour.ts';
import { archiveStream } from './artifact.ts';
import { probeInvalidTokens, verifyArtifact, verifyTrace, type BuildCheck, type CheckingRunner } from './build-checks.ts';
import type { FaultPlan } from './faults.ts';
import type { FleetLink } from './fleet-link.ts';
import { header, type Answer } from './http-client.ts';
import { jobLog } from './job-log.ts';
import type { Prng } from '../common/prng.ts';
import { rangeEnd, type BuildPayload, type RunnerApi } from './runner-client.ts';

export type Outcome = 'success' | 'failed' | 'canceled' | 'abandoned';
type Tick = 'ok' | 'abort' | 'retry' | 'put';

const HOST = os.hostname();

/** The runner a build runs on, as the build sees it: its identity, counters and state line. */
export interface BuildRunner extends CheckingRunner {
  readonly spec: { readonly seed: number; readonly behaviour: ResolvedBehaviour };
  readonly token: string | undefined;
  note(state: string, detail: string, progress?: number): void;
  noteFailed(what: string, a: Answer): void;
  wait(ms: number): Promise<void>;
}

/**
 * Runs one build `runner` took. Whether it fails and uploads, and its trace, come from `prng` (the
 * runner's PRNG forked by build id), drawn in this order so a seed gives the same builds.
 */
export function runBuild(runner: BuildRunner, link: FleetLink, api: RunnerApi, build: BuildPayload, prng: Prng, faults: FaultPlan): Promise<Outcome> {
  const b = runner.spec.behaviour;
  const fails = prng.chance(b.failRate);
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
      runnerName: runner.name,
      runnerToken: runner.token!,
      host: HOST,
      targetBytes: b.traceBytes,
      fails,
      artifacts: upload ? { name: artifactsName, bytes: b.artifactBytes } : null,
    },
    prng,
  );
  return new BuildRun(runner, link, api, build, trace, prng, faults).run(fails, upload, `${artifactsName}.zip`);
}

/** One build, from the PUT running to the verification. */
class BuildRun {
  private acked = 0;
  private produced = 0;
  private mode: 'patch' | 'put' = 'patch';
  private readonly id: number;
  private readonly token: string;

  constructor(
    private readonly r: BuildRunner,
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

  private get check(): BuildCheck {
    return { id: this.id, token: this.token, runner: this.r, link: this.link, api: this.api };
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

    if (badToken) await probeInvalidTokens(this.check);

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

    if (this.link.verify && this.mode === 'patch' && this.acked > 0) await verifyTrace(this.check, this.trace.subarray(0, this.acked), 'incremental');

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
      await verifyTrace(this.check, this.trace, 'final');
      if (uploaded) await verifyArtifact(this.check, uploaded);
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
}
