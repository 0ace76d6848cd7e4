// The steps of the model-based test: each one request (or a restart, a kill), its expected answer
// computed from the model, then the model updated. Entities are picked by a random number taken
// modulo what exists when the step runs, so a generated sequence stays valid while it shrinks.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import yazl from 'yazl';
import { prng } from '../support.ts';
import { Model, QUEUES, type MArtifact, type MBuild, type MRunner } from './model.ts';
import { checkConnections, checkTokensStayHome, checkCounters, checkDownload, checkSettings, checkTrace, checkTraceTail, sweep } from './checks.ts';
import { REGISTRATION, type Mode, type RealSystem } from './system.ts';
import { afterStep, assertMessage, body, pick, type Cmd } from './step.ts';
import { hardeningArbitraries } from './hardening.ts';
import { faultArbitraries, Guarded } from './outage.ts';
import { unfixed } from './known-unfixed.ts';
import { RaceUpdateCancel } from './race.ts';

/**
 * Bytes a step sends, derived from its seed: the same sequence sends the same bytes. Text (with
 * UTF-8 and ANSI escapes) for even seeds, binary for odd ones; past 4 KiB a seeded block repeats,
 * each copy stamped with its offset, so that large bodies cost little to make and a misplaced
 * block still shows.
 */
export function bytesOf(seed: number, n: number): Buffer {
  const rng = prng(seed + 1);
  const block = seed % 2 === 0 ? rng.text(Math.min(n, 4096)) : rng.bytes(Math.min(n, 4096));
  if (n <= 4096) return block;
  const out = Buffer.allocUnsafe(n);
  for (let off = 0; off < n; off += 4096) {
    block.copy(out, off, 0, Math.min(4096, n - off));
    if (off + 12 <= n) out.write(`@${off.toString(16).padStart(10, '0')}|`, off, 'latin1');
  }
  return out;
}

class CreateProject implements Cmd {
  constructor(readonly shared: boolean) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    const res = await r.admin('POST', '/api/v3/sim/projects', { name: `model-${m.projects.length}`, shared_runners_enabled: this.shared });
    assert.equal(res.status, 201, body(res));
    const p = res.json();
    m.projects.push({ id: p.id, runnersToken: p.runners_token, shared: this.shared });
    await afterStep(m, r);
  }
  toString = () => `CreateProject(shared=${this.shared})`;
}

/** The ids of created builds, whatever the answer's shape (one view, a list of views, or ids). */
type Created = number | { id: number };
const idOf = (b: Created) => (typeof b === 'number' ? b : b.id);

function createdIds(json: Created[] | { ids: number[] } | { builds: Created[] } | { id: number }): number[] {
  if (Array.isArray(json)) return json.map(idOf);
  if ('ids' in json && Array.isArray(json.ids)) return json.ids;
  if ('builds' in json && Array.isArray(json.builds)) return json.builds.map(idOf);
  return [(json as { id: number }).id];
}

class CreateBuilds implements Cmd {
  constructor(readonly project: number, readonly count: number | undefined) {}
  check = (m: Readonly<Model>) => m.projects.length > 0 && m.builds.length < 900;
  async run(m: Model, r: RealSystem) {
    const p = pick(m.projects, this.project);
    const res = await r.admin('POST', `/api/v3/sim/projects/${p.id}/builds`, { commands: 'echo model', ...(this.count === undefined ? {} : { count: this.count }) });
    assert.equal(res.status, 201, body(res));
    const ids = createdIds(res.json());
    assert.equal(ids.length, this.count ?? 1, 'builds created');
    for (const id of ids) m.builds.push({ id, projectId: p.id, token: null, status: 'pending', runnerId: null, trace: Buffer.alloc(0), artifact: null });
    m.epoch++;
    await afterStep(m, r, m.build(ids[ids.length - 1]!));
  }
  toString = () => `CreateBuilds(project#${this.project}, count=${this.count})`;
}

class RegisterRunner implements Cmd {
  constructor(readonly project: number | null, readonly viaJsonSuffix: boolean) {}
  check = (m: Readonly<Model>) => this.project === null || m.projects.length > 0;
  async run(m: Model, r: RealSystem) {
    const p = this.project === null ? undefined : pick(m.projects, this.project);
    const res = await r.runner('POST', `/ci/api/v1/runners/register${this.viaJsonSuffix ? '.json' : ''}`, { token: p ? p.runnersToken : REGISTRATION, description: 'model' });
    assert.equal(res.status, 201, body(res));
    const { id, token } = res.json();
    m.runners.push({ id, token, shared: !p, projectId: p?.id ?? null, active: true, deleted: false });
    await afterStep(m, r);
  }
  toString = () => `RegisterRunner(${this.project === null ? 'shared' : `project#${this.project}`})`;
}

class Poll implements Cmd {
  constructor(readonly runner: number, readonly sendLastUpdate: boolean) {}
  check = (m: Readonly<Model>) => m.runners.length > 0;
  async run(m: Model, r: RealSystem) {
    const runner = pick(m.runners, this.runner);
    // Two instances: what one gave is compared with what the other gives (known-unfixed.ts).
    const perInstance = r.instances.length > 1 && unfixed('pg-last-update');
    const sent = this.sendLastUpdate && !perInstance ? runner.lastUpdate : undefined;
    const res = await r.runner('POST', '/ci/api/v1/builds/register.json', { token: runner.token, ...(sent ? { last_update: sent.value } : {}) });
    const what = `poll by runner ${runner.id}`;
    if (runner.deleted) return assert.equal(res.status, 403, `${what} (deleted): ${body(res)}`), afterStep(m, r);
    if (!runner.active) return assert.equal(res.status, 404, `${what} (paused): ${body(res)}`), afterStep(m, r);
    // A last_update equal to the current queue value short-cuts to "nothing" (GitLab's long-poll hint).
    const expected = sent && sent.epoch === m.epoch ? undefined : m.nextFor(runner);
    if (!expected) {
      assert.equal(res.status, 204, `${what}: expected no build, got ${res.status} ${body(res)}`);
      const value = String(res.headers['x-gitlab-last-update'] ?? '');
      assert.ok(value !== '', `${what}: 204 without X-GitLab-Last-Update`);
      if (sent && sent.epoch === m.epoch) assert.equal(value, sent.value, `${what}: the queue value changed without a reason\nrecent requests:\n  ${r.recent.join('\n  ')}`);
      if (runner.lastUpdate && runner.lastUpdate.epoch !== m.epoch && !perInstance) assert.notEqual(value, runner.lastUpdate.value, `${what}: a stale queue value was given again`);
      runner.lastUpdate = { value, epoch: m.epoch };
      return afterStep(m, r);
    }
    assert.equal(res.status, 201, `${what}: expected build ${expected.id}, got ${res.status} ${body(res)}`);
    const got = res.json();
    assert.equal(got.id, expected.id, `${what}: dispatch order`);
    assert.equal(got.status, 'running');
    assert.equal(typeof got.token, 'string');
    expected.status = 'running';
    expected.runnerId = runner.id;
    expected.token = got.token;
    await afterStep(m, r, expected);
  }
  toString = () => `Poll(runner#${this.runner}, lastUpdate=${this.sendLastUpdate})`;
}

type TokenKind = 'build' | 'project' | 'other' | 'query';
function tokenFor(m: Model, b: MBuild, kind: TokenKind): { token: string; valid: boolean } {
  const projectToken = m.project(b.projectId).runnersToken;
  if (kind === 'other') {
    // Another project's token, or a well-formed nonsense one: never this build's.
    const other = m.projects.find((p) => p.id !== b.projectId);
    return { token: other ? other.runnersToken : 'not-a-token-0123456789abcdef', valid: false };
  }
  if (kind === 'project') return { token: projectToken, valid: true };
  return { token: b.token ?? projectToken, valid: true };
}

type RangeKind = 'right' | 'behind' | 'ahead' | 'garbage' | 'missing';
const GARBAGE_RANGES = ['bytes=abc', 'abc-1', '-5-10', ''];

class TracePart implements Cmd {
  constructor(
    readonly build: number,
    readonly size: number,
    readonly range: RangeKind,
    readonly token: TokenKind,
    readonly seed: number,
  ) {}
  check = (m: Readonly<Model>) => m.builds.length > 0;
  async run(m: Model, r: RealSystem) {
    const b = pick(m.builds, this.build);
    const len = b.trace.length;
    const { token, valid } = tokenFor(m, b, this.token);
    const part = bytesOf(this.seed, this.size);
    let header: string | undefined;
    let start = len;
    if (this.range === 'right') header = `${len}-${len + part.length}`;
    else if (this.range === 'behind') {
      start = Math.max(0, len - 1 - (this.seed % 100));
      header = `${start}-${start + part.length}`;
    } else if (this.range === 'ahead') {
      start = len + 1 + (this.seed % 100);
      header = `${start}-${start + part.length}`;
    } else if (this.range === 'garbage') {
      start = 0;
      header = pick(GARBAGE_RANGES, this.seed);
    }
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (header !== undefined) headers['content-range'] = header;
    if (this.token !== 'query') headers['build-token'] = token;
    const q = this.token === 'query' ? `?token=${encodeURIComponent(token)}` : '';
    const res = await r.request('PATCH', `/ci/api/v1/builds/${b.id}/trace.txt${q}`, { headers, body: part });
    const what = `trace part (${this.range}, ${part.length} bytes at ${start}) of build ${b.id} at ${len}`;
    if (!valid) assert.equal(res.status, 403, `${what} with a wrong token: ${body(res)}`);
    else if (header === undefined) assert.equal(res.status, 400, `${what}: ${body(res)}`);
    else if (start !== len) {
      assert.equal(res.status, 416, `${what}: ${body(res)}`);
      assert.equal(res.headers.range, `0-${len}`, `${what}: Range of the 416`);
    } else if (len + part.length > m.maxTraceBytes) assert.equal(res.status, 413, `${what}: ${body(res)}`);
    else {
      assert.equal(res.status, 202, `${what}: ${body(res)}`);
      assert.equal(res.headers.range, `0-${len + part.length}`, `${what}: Range`);
      assert.equal(res.headers['build-status'], b.status, `${what}: Build-Status`);
      b.trace = Buffer.concat([b.trace, part]);
    }
    await checkTraceTail(r, b, len);
    await afterStep(m, r, b);
  }
  toString = () => `TracePart(build#${this.build}, ${this.size}, ${this.range}, ${this.token}, seed=${this.seed})`;
}

class UpdateBuild implements Cmd {
  constructor(
    readonly build: number,
    readonly ownRunner: boolean,
    readonly other: number,
    readonly state: 'success' | 'failed' | 'running' | undefined,
    readonly traceSize: number | undefined,
    readonly seed: number,
  ) {}
  check = (m: Readonly<Model>) => m.builds.some((b) => b.runnerId !== null) && m.runners.length > 0;
  async run(m: Model, r: RealSystem) {
    const taken = m.builds.filter((b) => b.runnerId !== null);
    const b = pick(taken, this.build);
    const runner = this.ownRunner ? m.runner(b.runnerId)! : pick(m.runners, this.other);
    // Text (an even seed): JSON carries the trace as a string, so what is stored is its UTF-8 encoding.
    const text = this.traceSize === undefined ? undefined : bytesOf(this.seed * 2, this.traceSize).toString('utf8');
    const trace = text === undefined ? undefined : Buffer.from(text);
    const sent = {
      token: runner.token,
      ...(this.state ? { state: this.state } : {}),
      ...(text !== undefined ? { trace: text } : {}),
    };
    const res = await r.runner('PUT', `/ci/api/v1/builds/${b.id}.json`, sent);
    const what = `PUT build ${b.id} (${b.status}, runner ${b.runnerId}) by runner ${runner.id}${runner.deleted ? ' (deleted)' : ''}, state ${this.state}`;
    // A body larger than --max-runner-body-kib for a build that is not running is answered 404 before
    // it is read, so before its token is known (a deliberate difference from GitLab's 403: README).
    const unreadBig = b.status !== 'running' && Buffer.byteLength(JSON.stringify(sent)) > 64 * 1024;
    if (runner.deleted && !unreadBig) assert.equal(res.status, 403, `${what}: ${body(res)}`);
    else if (runner.deleted || b.runnerId !== runner.id || b.status !== 'running') assert.equal(res.status, 404, `${what}: ${body(res)}`);
    else if (trace && trace.length > m.maxTraceBytes) assert.equal(res.status, 413, `${what}: ${body(res)}`);
    else {
      assert.equal(res.status, 200, `${what}: ${body(res)}`);
      if (trace) b.trace = trace;
      if (this.state === 'success' || this.state === 'failed') b.status = this.state;
      assert.equal(res.json().status, b.status, `${what}: status answered`);
      await checkTrace(r, b);
    }
    await afterStep(m, r, b);
  }
  toString = () => `UpdateBuild(build#${this.build}, own=${this.ownRunner}, other#${this.other}, ${this.state}, trace=${this.traceSize}, seed=${this.seed})`;
}

class Cancel implements Cmd {
  constructor(readonly build: number) {}
  check = (m: Readonly<Model>) => m.builds.length > 0;
  async run(m: Model, r: RealSystem) {
    const b = pick(m.builds, this.build);
    const res = await r.admin('POST', `/api/v3/sim/builds/${b.id}/cancel`);
    if (b.status === 'pending' || b.status === 'running') {
      assert.equal(res.status, 200, `cancel build ${b.id} (${b.status}): ${body(res)}`);
      b.status = 'canceled';
    } else assert.equal(res.status, 409, `cancel build ${b.id} (${b.status}): ${body(res)}`);
    await afterStep(m, r, b);
  }
  toString = () => `Cancel(build#${this.build})`;
}

/** expire_in as sent, and the seconds the model expects (undefined: no expiry). */
export const EXPIRE_IN: [string, number | undefined][] = [
  ['1 week', 604800], ['7d', 604800], ['2 hrs 30 min', 9000], ['3600', 3600], ['1 sec', 1], ['0.2', 0.2], ['0', 0],
  ['bogus', undefined], ['', undefined], ['1 year', 31557600],
  // Past what a Date holds or far past the cap: stored as --max-artifact-expire-days.
  ['300000 years', 300000 * 31557600], ['9'.repeat(99), Number('9'.repeat(99))], ['36526 days', 36526 * 86400], ['36524 days', 36524 * 86400],
  ['99999999999999999999 years', 99999999999999999999 * 31557600], ['2 days', 172800],
  // Not durations: no expiry, as GitLab.
  ['1e400', undefined], ['-5', undefined], ['-1 week', undefined], ['Infinity', undefined], ['NaN', undefined], ['1'.padEnd(101, '0'), undefined],
];
const FILENAMES: [string, string][] = [
  ['artifacts.zip', 'artifacts.zip'], ['out/dir/build.zip', 'build.zip'], ['Größe läuft.zip', 'Größe läuft.zip'], ['..', 'artifacts.zip'],
  ['C:\\tmp\\w.zip', 'w.zip'], ['x'.repeat(300), 'x'.repeat(255)],
];

function zipOf(seed: number, entries: number): Promise<{ content: Buffer; listing: { name: string; size: number }[] }> {
  const zip = new yazl.ZipFile();
  const listing: { name: string; size: number }[] = [];
  for (let i = 0; i < entries; i++) {
    const data = bytesOf(seed + i, (seed * (i + 1)) % 3000);
    const name = `dir${i % 3}/file-${seed}-${i}.txt`;
    zip.addBuffer(data, name, { mtime: new Date(2020, 0, 1) });
    listing.push({ name, size: data.length });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve({ content: Buffer.concat(chunks), listing }));
    zip.outputStream.on('error', reject);
  });
}

class Upload implements Cmd {
  constructor(
    readonly build: number,
    readonly size: number,
    readonly zipEntries: number,
    readonly expire: number,
    readonly expireAsField: boolean,
    readonly filename: number,
    readonly token: TokenKind,
    readonly tokenAsField: boolean,
    readonly seed: number,
  ) {}
  check = (m: Readonly<Model>) => m.builds.length > 0;
  async run(m: Model, r: RealSystem) {
    const b = pick(m.builds, this.build);
    const [expireIn, seconds] = pick(EXPIRE_IN, this.expire);
    const [sentName, storedName] = pick(FILENAMES, this.filename);
    const { token, valid } = tokenFor(m, b, this.token);
    const zip = this.zipEntries > 0 ? await zipOf(this.seed, this.zipEntries) : undefined;
    const content = zip ? zip.content : bytesOf(this.seed, this.size);
    const boundary = `model${this.seed}x`;
    const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const fields = (this.tokenAsField ? field('token', token) : '') + (this.expireAsField ? field('expire_in', expireIn) : '');
    const payload = Buffer.concat([
      Buffer.from(`${fields}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${sentName}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const query = new URLSearchParams();
    if (!this.expireAsField) query.set('expire_in', expireIn);
    const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    if (!this.tokenAsField) headers['build-token'] = token;
    const t0 = Date.now();
    const res = await r.request('POST', `/ci/api/v1/builds/${b.id}/artifacts?${query}`, { headers, body: payload });
    const t1 = Date.now();
    const what = `upload of ${content.length} bytes to build ${b.id} (${b.status}), expire_in "${expireIn}"`;
    if (!valid) assert.equal(res.status, 403, `${what}, wrong token: ${body(res)}`);
    else if (b.status !== 'running') assert.equal(res.status, 403, `${what}: ${body(res)}`);
    else if (content.length >= m.maxArtifactBytes) assert.equal(res.status, 413, `${what}: ${body(res)}`);
    else {
      assert.equal(res.status, 201, `${what}: ${body(res)}`);
      const ms = Math.min((seconds ?? 0) * 1000, m.maxExpireDays * 86_400_000);
      const a: MArtifact = {
        content,
        filename: storedName,
        expire: seconds === undefined ? null : { lo: t0 + Math.floor(ms) - 1, hi: t1 + Math.ceil(ms) + 1 },
        listing: zip ? zip.listing : null,
      };
      b.artifact = a;
      const got = res.json();
      assert.deepEqual(got.artifacts_file, { filename: storedName, size: content.length }, `${what}: artifacts_file`);
    }
    await afterStep(m, r, b);
  }
  toString = () =>
    `Upload(build#${this.build}, size=${this.size}, zip=${this.zipEntries}, expire#${this.expire}, field=${this.expireAsField}, name#${this.filename}, ${this.token}, tokenField=${this.tokenAsField}, seed=${this.seed})`;
}

class Download implements Cmd {
  constructor(readonly build: number, readonly via: 'runner' | 'control') {}
  check = (m: Readonly<Model>) => m.builds.length > 0;
  async run(m: Model, r: RealSystem) {
    const b = pick(m.builds, this.build);
    await checkDownload(m, r, b, this.via);
    await afterStep(m, r, b);
  }
  toString = () => `Download(build#${this.build}, ${this.via})`;
}

class DeleteArtifacts implements Cmd {
  constructor(readonly build: number, readonly token: TokenKind) {}
  check = (m: Readonly<Model>) => m.builds.length > 0;
  async run(m: Model, r: RealSystem) {
    const b = pick(m.builds, this.token === 'query' ? this.build : this.build);
    const { token, valid } = tokenFor(m, b, this.token);
    const q = this.token === 'query' ? `?token=${encodeURIComponent(token)}` : '';
    const res = await r.request('DELETE', `/ci/api/v1/builds/${b.id}/artifacts${q}`, { headers: this.token === 'query' ? {} : { 'build-token': token } });
    if (!valid) assert.equal(res.status, 403, `delete artifacts of build ${b.id} with a wrong token: ${body(res)}`);
    else {
      assert.equal(res.status, 200, `delete artifacts of build ${b.id}: ${body(res)}`);
      b.artifact = null;
    }
    await afterStep(m, r, b);
  }
  toString = () => `DeleteArtifacts(build#${this.build}, ${this.token})`;
}

class PauseRunner implements Cmd {
  constructor(readonly runner: number, readonly active: boolean) {}
  check = (m: Readonly<Model>) => m.runners.length > 0;
  async run(m: Model, r: RealSystem) {
    const runner = pick(m.runners, this.runner);
    const res = await r.admin('PATCH', `/api/v3/sim/runners/${runner.id}`, { active: this.active });
    if (runner.deleted) assert.equal(res.status, 404, `pause deleted runner ${runner.id}: ${body(res)}`);
    else {
      assert.equal(res.status, 200, `pause runner ${runner.id}: ${body(res)}`);
      assert.equal(res.json().active, this.active);
      runner.active = this.active;
    }
    await afterStep(m, r);
  }
  toString = () => `PauseRunner(runner#${this.runner}, active=${this.active})`;
}

/** Any runner, the newest and already deleted ones too: ids are never reused (migration 6). */
const deletable = (m: Readonly<Model>) => m.runners;

class DeleteRunner implements Cmd {
  constructor(readonly runner: number, readonly viaRunnerApi: boolean) {}
  check = (m: Readonly<Model>) => deletable(m).length > 0;
  async run(m: Model, r: RealSystem) {
    const runner = pick(deletable(m), this.runner);
    const res = this.viaRunnerApi
      ? await r.runner('DELETE', '/ci/api/v1/runners/delete', { token: runner.token })
      : await r.admin('DELETE', `/api/v3/sim/runners/${runner.id}`);
    const what = `delete runner ${runner.id}${runner.deleted ? ' (already deleted)' : ''} via ${this.viaRunnerApi ? 'runner' : 'control'} API`;
    if (runner.deleted) assert.equal(res.status, this.viaRunnerApi ? 403 : 404, `${what}: ${body(res)}`);
    else {
      assert.equal(res.status, this.viaRunnerApi ? 200 : 204, `${what}: ${body(res)}`);
      // What it was running could never finish: the server fails it.
      for (const b of m.builds) if (b.runnerId === runner.id && b.status === 'running') b.status = 'failed';
    }
    runner.deleted = true;
    await afterStep(m, r);
  }
  toString = () => `DeleteRunner(runner#${this.runner}, runnerApi=${this.viaRunnerApi})`;
}


class EnqueueJobs implements Cmd {
  constructor(readonly queue: number, readonly count: number, readonly fail: boolean, readonly retry: false | 0, readonly durationMs = 0) {}
  check = (m: Readonly<Model>) => m.jobs.deadMax + this.count < 900;
  async run(m: Model, r: RealSystem) {
    const queue = pick(QUEUES, this.queue);
    const res = await r.admin('POST', '/api/v3/sim/jobs', { queue, count: this.count, duration_ms: this.durationMs, ...(this.fail ? { fail: true, retry: this.retry } : {}) });
    assert.equal(res.status, 202, `enqueue: ${body(res)}`);
    assert.equal(res.json().enqueued, this.count);
    m.jobs.acked += this.count;
    const q = m.jobs.queues.get(queue) ?? { total: 0, failing: 0, dead: 0 };
    m.jobs.queues.set(queue, q);
    q.total += this.count;
    if (this.fail) {
      m.jobs.failing += this.count;
      q.failing += this.count;
    }
    if (this.fail && this.retry === 0) {
      m.jobs.deadMin += this.count;
      m.jobs.deadMax += this.count;
      q.dead += this.count;
    }
    await afterStep(m, r);
  }
  unknownOutcome(m: Model) {
    m.jobs.maybe += this.count;
    if (this.fail) m.jobs.maybeFailing += this.count;
    if (this.fail && this.retry === 0) m.jobs.deadMax += this.count;
  }
  toString = () => `EnqueueJobs(queue#${this.queue}, ${this.count}, fail=${this.fail}, retry=${this.retry}, ${this.durationMs} ms)`;
}

/** Waits until the model's queues are empty, then checks the counters and the dead set (and clears it). */
class DrainJobs implements Cmd {
  constructor(readonly clearDead: boolean) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const queues = (await r.admin('GET', '/api/v3/sim/jobs/queues')).json() as { name: string; backlog: number }[];
      const dead = (await r.admin('GET', '/api/v3/sim/jobs/dead?limit=1000')).json() as unknown[];
      const busy = (await r.admin('GET', '/api/v3/sidekiq/job_stats')).json().jobs;
      const waiting = queues.filter((q) => m.jobs.queues.has(q.name)).reduce((n, q) => n + q.backlog, 0);
      // Jobscope's own jobs count as processed too, and a job taken is out of the backlog while it runs:
      // the failed count is waited for as well, so that a running failing job is not missed.
      const failed = busy.failed - m.counters.failed0;
      if (waiting === 0 && dead.length >= m.jobs.deadMin && busy.processed - m.counters.processed0 >= m.jobs.acked && failed >= m.jobs.failing) break;
      assert.ok(
        Date.now() < deadline,
        `jobs not drained in 15 s: backlog ${waiting}, dead ${dead.length}/${m.jobs.deadMin}..${m.jobs.deadMax}, processed ${busy.processed - m.counters.processed0}/${m.jobs.acked}, failed ${failed}/${m.jobs.failing}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await checkCounters(m, r, true);
    if (this.clearDead) {
      const res = await r.admin('DELETE', '/api/v3/sim/jobs/dead');
      assert.equal(res.status, 200);
      const n = res.json().count as number;
      assert.ok(n >= m.jobs.deadMin && n <= m.jobs.deadMax, `${n} jobs cleared from the dead set, expected ${m.jobs.deadMin}..${m.jobs.deadMax}`);
      // A job a queue deletion dropped while it ran may still die later: at most the rest of the range.
      m.jobs.deadMax -= n;
      m.jobs.deadMin = 0;
    }
    await afterStep(m, r);
  }
  unknownOutcome(m: Model) {
    if (this.clearDead) m.jobs.deadMin = 0;
  }
  toString = () => `DrainJobs(clearDead=${this.clearDead})`;
}

/** Settings whose effect the model knows (sizes) or that are harmless to save; values valid for their flag. */
const SETTING_VALUES: [string, (string | number | boolean | null)[]][] = [
  ['max-trace-mb', [1, 2, 64, null]],
  ['max-artifact-mb', [1, 100, null]],
  ['history-days', [1, 7, null]],
  ['job-concurrency', [1, 4, 10, null]],
  ['sim-journal-entries', [10, 5000, null]],
  ['runner-offline-after-ms', [60000, 3600000, null]],
  ['log-level', ['warn', 'info', null]],
  ['max-artifact-expire-days', [1, 36525, null]],
  ['max-build-batch-mb', [1, 2, 16, null]],
];

class ChangeSetting implements Cmd {
  constructor(readonly setting: number, readonly value: number) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    const [name, values] = pick(SETTING_VALUES, this.setting);
    const value = pick(values, this.value);
    const res = await r.admin('PUT', '/api/app/settings', { values: { [name]: value } });
    assert.equal(res.status, 200, `save ${name}=${value}: ${body(res)}`);
    // A save rewrites settings.json: an unreadable one is replaced, this name's invalid value too.
    if (m.fileBroken) m.fileBroken = false;
    delete m.savedBad[name];
    if (value === null) delete m.saved[name];
    else m.saved[name] = value;
    await checkSettings(m, r);
    await afterStep(m, r);
  }
  toString = () => `ChangeSetting(#${this.setting}, #${this.value})`;
}

class AddConnection implements Cmd {
  constructor(readonly interval: number, readonly enabled: boolean, readonly url = 0) {}
  check = (m: Readonly<Model>) => m.connections.length < 12;
  async run(m: Model, r: RealSystem) {
    const name = `remote ${m.steps}`;
    // Port 9 on loopback: refused at once, so the sampler records errors without waiting; or a stand-in remote.
    const url = this.url === 0 ? 'http://127.0.0.1:9' : pick(r.remotes.urls, this.url);
    const token = m.giveToken(url);
    const res = await r.admin('POST', '/api/app/connections', { name, base_url: url, private_token: token, interval_s: this.interval, enabled: this.enabled });
    assert.equal(res.status, 201, `add connection: ${body(res)}`);
    const c = res.json();
    m.connections.push({ id: c.id, name, enabled: this.enabled, interval: this.interval, hasToken: true, embedded: false, url, token });
    await checkConnections(m, r);
    await afterStep(m, r);
  }
  toString = () => `AddConnection(${this.interval}s, enabled=${this.enabled}, url#${this.url})`;
}

type ConnChange = 'name' | 'interval' | 'enabled' | 'url' | 'urlNoToken' | 'token';

class PatchConnection implements Cmd {
  constructor(readonly conn: number, readonly change: ConnChange, readonly n: number) {}
  check = (m: Readonly<Model>) => m.connections.length > 0;
  async run(m: Model, r: RealSystem) {
    const c = pick(m.connections, this.conn);
    const urls = ['http://127.0.0.1:9', 'http://127.0.0.1:10/gitlab', ...r.remotes.urls];
    const url = pick(urls, this.n);
    let patch: Record<string, unknown>;
    let token: string | undefined;
    if (this.change === 'name') patch = { name: `renamed ${this.n}` };
    else if (this.change === 'interval') patch = { interval_s: 2 + (this.n % 59) };
    else if (this.change === 'enabled') patch = { enabled: this.n % 2 === 0 };
    // With the token again: a changed URL must not carry the old one, either way has_token.
    else if (this.change === 'url') patch = { base_url: url, private_token: (token = m.giveToken(url)) };
    else if (this.change === 'urlNoToken') patch = { base_url: url };
    else patch = { private_token: (token = m.giveToken(c.url ?? 'http://embedded.invalid')) };
    const res = await r.admin('PATCH', `/api/app/connections/${c.id}`, patch);
    const what = `patch connection ${c.id} (${c.url ?? 'embedded'}) ${JSON.stringify(patch)}`;
    const otherOrigin = c.url !== undefined && new URL(url).origin !== new URL(c.url).origin;
    if (c.embedded && ['url', 'urlNoToken', 'token'].includes(this.change)) assert.equal(res.status, 400, `${what}: the embedded connection: ${body(res)}`);
    else if (this.change === 'urlNoToken' && otherOrigin) {
      // The stored token was given for the old origin: moving needs it again, and nothing changes.
      assert.equal(res.status, 400, `${what}: another origin without private_token: ${body(res)}`);
      assertMessage(res, what);
    } else {
      assert.equal(res.status, 200, `${what}: ${body(res)}`);
      if (this.change === 'name') c.name = String(patch.name);
      if (this.change === 'interval') c.interval = Number(patch.interval_s);
      if (this.change === 'enabled') c.enabled = Boolean(patch.enabled);
      if (this.change === 'url' || this.change === 'urlNoToken') c.url = url;
      if (token !== undefined) c.token = token;
    }
    await checkConnections(m, r);
    await afterStep(m, r);
  }
  toString = () => `PatchConnection(#${this.conn}, ${this.change}, ${this.n})`;
}

/** Tries a saved connection now: a stand-in remote it points at must get exactly its current token. */
class TestConnection implements Cmd {
  constructor(readonly conn: number) {}
  check = (m: Readonly<Model>) => m.connections.some((c) => !c.embedded);
  async run(m: Model, r: RealSystem) {
    const c = pick(m.connections.filter((x) => !x.embedded), this.conn);
    const from = r.remotes.received.length;
    const res = await r.admin('POST', `/api/app/connections/${c.id}/test`);
    assert.equal(res.status, 200, `test connection ${c.id}: ${body(res)}`);
    const origin = new URL(c.url!).origin;
    const stand = r.remotes.urls.some((u) => new URL(u).origin === origin);
    const got = r.remotes.received.slice(from);
    if (stand) {
      assert.equal(res.json().status, 404, `test connection ${c.id} at ${c.url}: the stand-in answers 404: ${body(res)}`);
      assert.ok(got.some((g) => g.origin === origin && g.token === c.token), `test connection ${c.id}: ${origin} did not get ${c.token}: ${JSON.stringify(got)}`);
    } else assert.equal(res.json().ok, false, `test connection ${c.id} at ${c.url}: ${body(res)}`);
    checkTokensStayHome(m, r);
    await afterStep(m, r);
  }
  toString = () => `TestConnection(#${this.conn})`;
}

class DeleteConnection implements Cmd {
  constructor(readonly conn: number) {}
  check = (m: Readonly<Model>) => m.connections.length > 0;
  async run(m: Model, r: RealSystem) {
    const c = pick(m.connections, this.conn);
    const res = await r.admin('DELETE', `/api/app/connections/${c.id}`);
    if (c.embedded) assert.equal(res.status, 400, `delete the embedded connection: ${body(res)}`);
    else {
      assert.equal(res.status, 204, `delete connection ${c.id}: ${body(res)}`);
      m.connections = m.connections.filter((x) => x !== c);
    }
    await checkConnections(m, r);
    await afterStep(m, r);
  }
  toString = () => `DeleteConnection(#${this.conn})`;
}

class Restart implements Cmd {
  check = () => true;
  duringFault = false;
  async run(m: Model, r: RealSystem) {
    await r.restart();
    m.restarted(r.mode === 'pg');
    m.restarts++;
    m.steps++;
    await sweep(m, r);
  }
  toString = () => 'Restart';
}

export class Kill9 implements Cmd {
  check = () => true;
  duringFault = false;
  async run(m: Model, r: RealSystem) {
    await r.kill9();
    m.restarted(r.mode === 'pg');
    m.kills++;
    m.steps++;
    await sweep(m, r);
  }
  toString = () => 'Kill9';
}

/** The command generator; restart and kill weights are per mille of steps. */
export function commandArbitrary(opts: { restartWeight: number; killWeight: number }): fc.Arbitrary<Cmd> {
  const idx = fc.nat({ max: 1_000_000 });
  const { builds, runnersAndJobs, seed, token } = coreArbitraries(idx);
  // The order of the steps is part of a seed's sequences (seeds.ts counts their steps): kept.
  const arbs: fc.WeightedArbitrary<Cmd>[] = [
    ...builds,
    {
      weight: 90,
      arbitrary: fc
        .tuple(idx, fc.oneof({ arbitrary: fc.integer({ min: 0, max: 16 * 1024 }), weight: 60 }, { arbitrary: fc.constant(1200 * 1024), weight: 1 }), fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 6 }), weight: 1 }), idx, fc.boolean(), idx, token, fc.boolean(), seed)
        .map(([b, n, z, e, ef, f, t, tf, s]) => new Upload(b, n, z, e, ef, f, t === 'query' ? 'build' : t, tf, s)),
    },
    { weight: 50, arbitrary: fc.tuple(idx, fc.constantFrom<'runner' | 'control'>('runner', 'control')).map(([b, v]) => new Download(b, v)) },
    { weight: 20, arbitrary: fc.tuple(idx, token).map(([b, t]) => new DeleteArtifacts(b, t)) },
    ...runnersAndJobs,
    { weight: 10, arbitrary: fc.tuple(idx, idx).map(([s, v]) => new ChangeSetting(s, v)) },
    { weight: 6, arbitrary: fc.tuple(fc.integer({ min: 2, max: 60 }), fc.boolean(), fc.nat({ max: 4 })).map(([i, e, u]) => new AddConnection(i, e, u)) },
    {
      weight: 12,
      arbitrary: fc
        .tuple(idx, fc.constantFrom<ConnChange>('name', 'interval', 'enabled', 'url', 'urlNoToken', 'urlNoToken', 'token'), idx)
        .map(([c, k, n]) => new PatchConnection(c, k, n)),
    },
    { weight: 5, arbitrary: idx.map((c) => new TestConnection(c)) },
    ...hardeningArbitraries(idx),
    { weight: 3, arbitrary: idx.map((c) => new DeleteConnection(c)) },
  ];
  if (opts.restartWeight > 0) arbs.push({ weight: opts.restartWeight, arbitrary: fc.constant(new Restart()) });
  if (opts.killWeight > 0) arbs.push({ weight: opts.killWeight, arbitrary: fc.constant(new Kill9()) });
  const all = fc.oneof(...arbs).map((c): Cmd => new WithinBudget(c));
  return process.env.MODEL_TRACE ? all.map((c) => new Traced(c)) : all;
}

/** The steps both step sets hold: projects, builds, runners, traces, updates, cancels (`builds`); runners and jobs. */
function coreArbitraries(idx: fc.Arbitrary<number>) {
  const seed = fc.integer({ min: 1, max: 1_000_000 });
  const token = fc.constantFrom<TokenKind>('build', 'build', 'build', 'build', 'project', 'query', 'other');
  const traceSize = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 3000 }), weight: 80 }, { arbitrary: fc.constant(700 * 1024), weight: 1 });
  const builds: fc.WeightedArbitrary<Cmd>[] = [
    { weight: 20, arbitrary: fc.boolean().map((s) => new CreateProject(s)) },
    { weight: 60, arbitrary: fc.tuple(idx, fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined })).map(([p, c]) => new CreateBuilds(p, c)) },
    { weight: 25, arbitrary: fc.tuple(fc.option(idx, { nil: null, freq: 2 }), fc.boolean()).map(([p, j]) => new RegisterRunner(p, j)) },
    { weight: 120, arbitrary: fc.tuple(idx, fc.boolean()).map(([x, l]) => new Poll(x, l)) },
    {
      weight: 220,
      arbitrary: fc
        .tuple(idx, traceSize, fc.constantFrom<RangeKind>('right', 'right', 'right', 'right', 'right', 'behind', 'ahead', 'garbage', 'missing'), token, seed)
        .map(([b, n, k, t, s]) => new TracePart(b, n, k, t, s)),
    },
    {
      weight: 70,
      arbitrary: fc
        .tuple(idx, fc.boolean(), idx, fc.constantFrom<'success' | 'failed' | 'running' | undefined>('success', 'failed', 'running', undefined), fc.option(fc.oneof({ arbitrary: fc.integer({ min: 0, max: 4000 }), weight: 30 }, { arbitrary: fc.constant(1100 * 1024), weight: 1 }), { nil: undefined, freq: 3 }), seed)
        .map(([b, own, o, st, ts, s]) => new UpdateBuild(b, own || o % 5 !== 0, o, st, ts, s)),
    },
    { weight: 40, arbitrary: idx.map((b) => new Cancel(b)) },
  ];
  const runnersAndJobs: fc.WeightedArbitrary<Cmd>[] = [
    { weight: 12, arbitrary: fc.tuple(idx, fc.boolean()).map(([x, a]) => new PauseRunner(x, a)) },
    { weight: 6, arbitrary: fc.tuple(idx, fc.boolean()).map(([x, v]) => new DeleteRunner(x, v)) },
    {
      weight: 25,
      arbitrary: fc
        .tuple(idx, fc.integer({ min: 1, max: 20 }), fc.boolean(), fc.constantFrom<false | 0>(false, 0), fc.constantFrom(0, 0, 0, 20))
        .map(([q, c, f, rt, d]) => new EnqueueJobs(q, c, f, rt, d)),
    },
    { weight: 4, arbitrary: fc.boolean().map((c) => new DrainJobs(c)) },
  ];
  return { builds, runnersAndJobs, seed, token };
}

/**
 * The step set of the mode suites (SQLite, Redis, PostgreSQL with two instances): builds, runners,
 * traces, updates, cancels, jobs, a PUT raced against a cancel, restarts (kill -9 of every instance
 * for child processes), and the mode's faults; no artifacts, connections or settings (their files
 * are the data dir's, the same in every mode). Each step is guarded (outage.ts) and names the
 * instance its requests go to.
 */
export function modeCommandArbitrary(mode: Mode, opts: { restartWeight: number; killWeight: number; faultWeight: number }): fc.Arbitrary<Cmd> {
  const idx = fc.nat({ max: 1_000_000 });
  const { builds, runnersAndJobs } = coreArbitraries(idx);
  const arbs: fc.WeightedArbitrary<Cmd>[] = [
    ...builds,
    ...runnersAndJobs,
    { weight: 40, arbitrary: fc.tuple(idx, fc.integer({ min: 1, max: 20 }), fc.boolean(), fc.constant<false | 0>(0), fc.constantFrom(0, 20)).map(([q, c, f, rt, d]) => new EnqueueJobs(q, c, f, rt, d)) },
    { weight: 8, arbitrary: fc.boolean().map((c) => new DrainJobs(c)) },
    ...faultArbitraries(mode, opts.faultWeight),
  ];
  if (!(mode === 'pg' && unfixed('pg-cancel-race'))) arbs.push({ weight: 30, arbitrary: fc.tuple(idx, fc.constantFrom<'success' | 'failed'>('success', 'failed'), fc.nat({ max: 1 })).map(([b, st, o]) => new RaceUpdateCancel(b, st, o)) });
  if (opts.restartWeight > 0) arbs.push({ weight: opts.restartWeight, arbitrary: fc.constant(new Restart()) });
  if (opts.killWeight > 0) arbs.push({ weight: opts.killWeight, arbitrary: fc.constant(new Kill9()) });
  const all = fc.tuple(fc.oneof(...arbs), fc.nat({ max: 1 })).map(([c, i]): Cmd => new Guarded(c, i));
  return process.env.MODEL_TRACE ? all.map((c) => new Traced(c)) : all;
}

/** A step that runs only while the run is within its step budget: past it fast-check skips it, as any whose check fails. */
class WithinBudget implements Cmd {
  constructor(readonly inner: Cmd) {}
  check = (m: Readonly<Model>) => m.steps < m.stepLimit && this.inner.check(m);
  run = (m: Model, r: RealSystem) => this.inner.run(m, r);
  toString = () => this.inner.toString();
}

/** MODEL_TRACE=1: each step printed with its wall and CPU time (the process's), to see where a run spends it. */
class Traced implements Cmd {
  constructor(readonly inner: Cmd) {}
  check = (m: Readonly<Model>) => this.inner.check(m);
  async run(m: Model, r: RealSystem) {
    const t = performance.now();
    const cpu = process.cpuUsage();
    await this.inner.run(m, r);
    const used = process.cpuUsage(cpu);
    console.log(`[model] ${(performance.now() - t).toFixed(1).padStart(7)} ms ${((used.user + used.system) / 1000).toFixed(1).padStart(7)} ms CPU  ${this.inner.toString()}`);
  }
  toString = () => this.inner.toString();
}

export type { Cmd, MRunner };
