// The checks a build makes of the server beyond running: requests with wrong tokens that must be
// refused, and, after the final update, the trace and the archive read back and compared with what
// was sent. What differs is a protocol violation in the fleet's stats.
import crypto from 'node:crypto';
import type { RunnerCounters } from '../contract/simulator.ts';
import type { FleetLink } from './fleet-link.ts';
import { controlApiBase, type RunnerApi } from './runner-client.ts';

/** The runner a build runs on, as far as its checks see it. */
export interface CheckingRunner {
  readonly name: string;
  readonly counters: RunnerCounters;
  noteError(kind: string): void;
  noteViolation(kind: string, buildId: number, message: string): void;
}

/** One build's checks: its id and build token, the runner and the fleet it belongs to. */
export interface BuildCheck {
  readonly id: number;
  readonly token: string;
  readonly runner: CheckingRunner;
  readonly link: FleetLink;
  readonly api: RunnerApi;
}

/** Requests with a wrong build token and a wrong runner token: each must be refused (403). */
export async function probeInvalidTokens({ id, runner, link, api }: BuildCheck): Promise<void> {
  const bogus = crypto.randomBytes(10).toString('hex');
  const fault = 'invalid_token';
  for (let i = 0; i < 2; i++) {
    runner.counters.faults++;
    link.stats.faults.injected(fault);
  }
  const p = await api.patchTrace(id, bogus, `0-0`, Buffer.alloc(0), { fault });
  link.stats.faults.record(fault, p.status);
  if (p.status >= 200 && p.status < 300) runner.noteViolation('accepted_invalid_token', id, `PATCH trace with a wrong Build-Token answered ${p.status}`);
  const u = await api.update(id, bogus, 'running', undefined, { fault });
  link.stats.faults.record(fault, u.status);
  if (u.status >= 200 && u.status < 300) runner.noteViolation('accepted_invalid_token', id, `PUT build with a wrong runner token answered ${u.status}`);
}

export async function verifyTrace({ id, runner, link }: BuildCheck, expected: Buffer, phase: string): Promise<void> {
  if (!link.adminToken) return;
  const a = await link.client.send({
    method: 'GET',
    url: `${controlApiBase(link.target)}/builds/${id}/trace`,
    headers: { 'PRIVATE-TOKEN': link.adminToken },
    runner: `${runner.name}/verify`,
    buildId: id,
    keepBytes: 4096,
    digest: true,
  });
  if (a.status !== 200) {
    runner.noteError(`verify_http_${a.status}`);
    return;
  }
  const want = crypto.createHash('sha256').update(expected).digest('hex');
  if (a.sha256 !== want || a.bodySize !== expected.length) {
    runner.noteViolation(
      'trace_mismatch',
      id,
      `${phase} trace differs: the server holds ${a.bodySize} bytes (sha256 ${a.sha256.slice(0, 12)}…), the runner sent ${expected.length} (sha256 ${want.slice(0, 12)}…)`,
    );
  } else link.stats.tracesVerified++;
}

export async function verifyArtifact({ id, token, runner, link, api }: BuildCheck, uploaded: { sha256: string; size: number }): Promise<void> {
  const a = await api.download(id, token, { keepBytes: 4096, digest: true });
  if (a.status !== 200) {
    runner.noteViolation('artifact_mismatch', id, `the uploaded archive could not be downloaded back: ${a.status || a.error}`);
    return;
  }
  if (a.sha256 !== uploaded.sha256 || a.bodySize !== uploaded.size) {
    runner.noteViolation(
      'artifact_mismatch',
      id,
      `downloaded ${a.bodySize} bytes (sha256 ${a.sha256.slice(0, 12)}…) but uploaded ${uploaded.size} (sha256 ${uploaded.sha256.slice(0, 12)}…)`,
    );
  } else link.stats.artifactsVerified++;
}
