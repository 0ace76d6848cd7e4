// Hardening steps, each checked against the model: build batches bounded by
// count × size (and JSON nesting), invalid settings (through the API, and written into
// settings.json by hand before a start), queue deletion, and Host headers that do not name the server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Model, QUEUES } from './model.ts';
import { checkSettings, checkTraceTail } from './checks.ts';
import { ADMIN, REGISTRATION, type Answer, type RealSystem } from './system.ts';
import { afterStep, assertMessage, body, pick, type Cmd } from './step.ts';

const MiB = 1024 * 1024;
/** The deepest any JSON body may nest (server/http/json-depth.ts): the body object is one level. */
const MAX_BODY_DEPTH = 64;
/** Besides commands and options, one stored build holds at most this much (names, sha, token, row). */
const BUILD_OVERHEAD_MAX = 4096;

/** The newest build on the server is the newest the model knows: nothing was stored behind its back. */
async function checkNewest(m: Model, r: RealSystem, what: string): Promise<void> {
  const list = (await r.admin('GET', '/api/v3/sim/builds?limit=1')).json() as { id: number }[];
  const newest = m.builds.reduce((max, b) => Math.max(max, b.id), 0);
  assert.equal(list[0]?.id ?? 0, newest, `${what}: the newest build`);
}

/** `levels` objects nested in each other, innermost {} (iterative: 4,000 levels must not recurse here). */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { d: v };
  return v;
}

type BatchShape = { kind: 'fixed'; cmdBytes: number; optBytes: number } | { kind: 'ratio'; ratio: number; inOptions: boolean };
type Expect = { status: 201 | 400 | 413 | 'either'; why: string };

/**
 * POST /projects/:id/builds with `count` and large commands or options:
 * count × the stored size of one build over --max-build-batch-mb is a 413 and stores nothing; options
 * over 1 MiB, commands over 1 MiB, or a body nested deeper than 64 levels are a 400; otherwise
 * {count, ids} and the model gains exactly those builds. A ratio shape sizes each build from the
 * limit in force, so the boundary is met whatever the saved limit is.
 */
class BuildBatch implements Cmd {
  constructor(
    readonly project: number,
    readonly count: number | undefined,
    readonly shape: BatchShape,
    /** Levels of the options object (0: none sent). */
    readonly depth: number,
  ) {}

  /**
   * The sizes of the request and what it must answer, by arithmetic: check() runs before every step
   * and must not build bodies of up to a few MiB to decide (run() builds it and checks its size).
   */
  private plan(m: Readonly<Model>) {
    const n = this.count ?? 1;
    let cmdBytes = 6;
    let optBytes = 0;
    if (this.shape.kind === 'fixed') ({ cmdBytes, optBytes } = this.shape);
    else {
      const per = Math.min(Math.ceil((this.shape.ratio * m.maxBatchBytes) / Math.max(1, n)), MiB + 64);
      if (this.shape.inOptions) optBytes = per;
      else cmdBytes = per;
    }
    const hasOptions = optBytes > 0 || this.depth > 0;
    const levels = Math.max(1, this.depth);
    // JSON of nested(levels): {} inside levels - 1 times {"d":…}; a blob adds ,"blob":"o…" to the outermost.
    const optJson = hasOptions ? 2 + 6 * (levels - 1) + (optBytes > 0 ? optBytes + (levels > 1 ? 10 : 9) : 0) : 2;
    // commands is 'echo x\n' repeated: JSON writes each newline as two bytes.
    const cmdJson = 2 + cmdBytes + Math.floor(cmdBytes / 7);
    const bodyBytes = 13 + cmdJson + (hasOptions ? 11 + optJson : 0) + (this.count === undefined ? 0 : 9 + String(this.count).length);
    const low = n * (cmdBytes + optJson);
    const high = low + n * BUILD_OVERHEAD_MAX;
    let expect: Expect;
    if (bodyBytes > m.maxTraceBytes + MiB) expect = { status: 413, why: `a ${bodyBytes}-byte body is over the body limit` };
    else if (hasOptions && 1 + levels > MAX_BODY_DEPTH) expect = { status: 400, why: `options ${this.depth} levels deep` };
    else if (this.count !== undefined && (this.count < 1 || this.count > 10_000)) expect = { status: 400, why: `count ${this.count}` };
    else if (cmdBytes > MiB) expect = { status: 400, why: `commands of ${cmdBytes} bytes` };
    else if (optJson > MiB) expect = { status: 400, why: `options of ${optJson} bytes` };
    else if (low > m.maxBatchBytes) expect = { status: 413, why: `${n} × at least ${cmdBytes + optJson} bytes over ${m.maxBatchBytes}` };
    else if (high <= m.maxBatchBytes) expect = { status: 201, why: `${n} × at most ${cmdBytes + optJson + BUILD_OVERHEAD_MAX} bytes within ${m.maxBatchBytes}` };
    else expect = { status: 'either', why: `${n} builds at the ${m.maxBatchBytes}-byte limit` };
    return { n, cmdBytes, optBytes, hasOptions, levels, optJson, bodyBytes, expect, stored: n * (cmdBytes + optJson) };
  }

  /** The body the plan describes; its sizes must be the plan's, or the expectation was computed for another body. */
  private body(plan: ReturnType<BuildBatch['plan']>) {
    const commands = 'echo x\n'.repeat(Math.ceil(plan.cmdBytes / 7)).slice(0, plan.cmdBytes);
    const options: Record<string, unknown> | undefined = plan.hasOptions ? nested(plan.levels) : undefined;
    if (options && plan.optBytes > 0) options.blob = 'o'.repeat(plan.optBytes);
    const json = JSON.stringify({ commands, ...(options ? { options } : {}), ...(this.count === undefined ? {} : { count: this.count }) });
    assert.equal(Buffer.byteLength(json), plan.bodyBytes, `${this}: body size`);
    assert.equal(options ? Buffer.byteLength(JSON.stringify(options)) : 2, plan.optJson, `${this}: options size`);
    return { json, options };
  }

  check = (m: Readonly<Model>) => {
    if (m.projects.length === 0) return false;
    const { n, expect, stored } = this.plan(m);
    // Lists carry commands and options: what may be stored is bounded per run, and so is the number of builds.
    return expect.status === 400 || expect.status === 413 || (m.builds.length + n < 900 && m.bigBytes + stored < 8 * MiB);
  };

  async run(m: Model, r: RealSystem) {
    const p = pick(m.projects, this.project);
    const plan = this.plan(m);
    const { n, expect, stored } = plan;
    const { json, options } = this.body(plan);
    const res = await r.request('POST', `/api/v3/sim/projects/${p.id}/builds`, { headers: { 'private-token': ADMIN, 'content-type': 'application/json' }, body: json });
    const what = `batch of ${this.count ?? 'one'} build(s) (${expect.why})`;
    if (expect.status === 'either') assert.ok(res.status === 201 || res.status === 413, `${what}: ${res.status} ${body(res)}`);
    else assert.equal(res.status, expect.status, `${what}: ${body(res)}`);
    if (res.status !== 201) {
      assertMessage(res, what);
      await checkNewest(m, r, `${what} answered ${res.status}`);
      return afterStep(m, r);
    }
    const got = res.json();
    const before = m.builds.reduce((max, b) => Math.max(max, b.id), 0);
    let ids: number[];
    if (this.count === undefined) ids = [got.id];
    else {
      assert.deepEqual(Object.keys(got).sort(), ['count', 'ids'], `${what}: a batch answers {count, ids}`);
      assert.equal(got.count, n, `${what}: count`);
      ids = got.ids;
    }
    assert.equal(ids.length, n, `${what}: ids`);
    ids.forEach((id, i) => assert.ok(id > (i === 0 ? before : ids[i - 1]!), `${what}: ids ${ids.slice(0, 5)}… are not new and ascending`));
    for (const id of ids) m.builds.push({ id, projectId: p.id, token: null, status: 'pending', runnerId: null, trace: Buffer.alloc(0), artifact: null });
    m.epoch++;
    m.bigBytes += stored;
    await checkNewest(m, r, what);
    if (options && json.length < 64 * 1024) {
      const view = (await r.admin('GET', `/api/v3/sim/builds/${ids[ids.length - 1]}`)).json();
      assert.equal(JSON.stringify(view.options), JSON.stringify(options), `${what}: options as stored`);
    }
    await afterStep(m, r, m.build(ids[ids.length - 1]!));
  }
  toString = () => `BuildBatch(project#${this.project}, count=${this.count}, ${JSON.stringify(this.shape)}, depth=${this.depth})`;
}

const BUILTIN_QUEUES = ['stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing'];

/**
 * DELETE /api/v3/sim/jobs/queues/:name: a built-in queue is a 409, an unknown one a
 * 404, a name the schema refuses a 400; a queue of the model's jobs goes away with its waiting jobs
 * (`dropped` of them, never more than it was given), its dead jobs stay.
 */
class DeleteQueue implements Cmd {
  constructor(readonly kind: 'model' | 'builtin' | 'unknown' | 'invalid', readonly n: number) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    const name =
      this.kind === 'model' ? pick(QUEUES, this.n) : this.kind === 'builtin' ? pick(BUILTIN_QUEUES, this.n) : this.kind === 'unknown' ? `model_never_${this.n % 5}` : pick(['bad name', 'x'.repeat(101), 'a/b', '%00'], this.n);
    const res = await r.admin('DELETE', `/api/v3/sim/jobs/queues/${encodeURIComponent(name)}`);
    const q = m.jobs.queues.get(name);
    const what = `delete queue ${JSON.stringify(name.slice(0, 40))}`;
    if (this.kind === 'builtin') assert.equal(res.status, 409, `${what} (built-in): ${body(res)}`);
    else if (this.kind === 'invalid') assert.equal(res.status, 400, `${what} (invalid name): ${body(res)}`);
    else if (!q) assert.equal(res.status, 404, `${what} (none): ${body(res)}`);
    else {
      assert.equal(res.status, 200, `${what}: ${body(res)}`);
      const { dropped } = res.json() as { dropped: number };
      assert.ok(Number.isInteger(dropped) && dropped >= 0 && dropped <= q.total, `${what}: dropped ${dropped} of the ${q.total} jobs it was given`);
      // Dropped jobs never run: the counters must count the rest; which of them would have failed or died is not known.
      m.jobs.acked -= dropped;
      m.jobs.failing -= Math.min(dropped, q.failing);
      m.jobs.deadMin -= Math.min(dropped, q.dead);
      m.jobs.queues.delete(name);
    }
    if (res.status !== 200) assertMessage(res, what);
    const listed = ((await r.admin('GET', '/api/v3/sim/jobs/queues')).json() as { name: string }[]).map((x) => x.name);
    for (const b of BUILTIN_QUEUES) assert.ok(listed.includes(b), `built-in queue ${b} is gone after ${what}`);
    for (const mq of QUEUES) assert.equal(listed.includes(mq), m.jobs.queues.has(mq), `queue ${mq} listed after ${what}`);
    await afterStep(m, r);
  }
  toString = () => `DeleteQueue(${this.kind}, ${this.n})`;
}

/** Values PUT /api/app/settings must refuse with 400, saving nothing: JSON bodies as sent. */
const BAD_PUTS: string[] = [
  '{"values":{"log-level":"bogus"}}',
  '{"values":{"sim-journal-entries":1e15}}',
  '{"values":{"sim-journal-entries":0}}',
  '{"values":{"max-trace-mb":-1}}',
  '{"values":{"max-trace-mb":"abc"}}',
  '{"values":{"max-trace-mb":true}}',
  '{"values":{"max-trace-mb":{}}}',
  '{"values":{"job-concurrency":1.5}}',
  '{"values":{"job-concurrency":0}}',
  '{"values":{"history-days":"Infinity"}}',
  '{"values":{"history-days":1e400}}',
  '{"values":{"history-days":"1e400"}}',
  '{"values":{"max-artifact-expire-days":36526}}',
  '{"values":{"max-artifact-expire-days":0}}',
  '{"values":{"max-build-batch-mb":4097}}',
  '{"values":{"runner-offline-after-ms":2147483648}}',
  '{"values":{"host":"8.8.8.8"}}',
  '{"values":{"host":"0.0.0.0"}}',
  '{"values":{"fsync":"maybe"}}',
  '{"values":{"mode":"evil"}}',
  '{"values":{"no-such-setting":1}}',
  '{"values":{"data-dir":"/tmp"}}',
  '{"values":{"admin-token":"0123456789abcdef0123"}}',
  // A valid value next to an invalid one: all or nothing.
  '{"values":{"max-trace-mb":2,"log-level":"bogus"}}',
  '{"values":{"max-build-batch-mb":1,"sim-journal-entries":1e15}}',
  '{"values":[]}',
  '{"values":null}',
  '{}',
  'not json',
];

class BadSetting implements Cmd {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    const raw = pick(BAD_PUTS, this.n);
    const res = await r.request('PUT', '/api/app/settings', { headers: { 'private-token': ADMIN, 'content-type': 'application/json' }, body: raw });
    assert.equal(res.status, 400, `PUT settings ${raw}: ${body(res)}`);
    assertMessage(res, `PUT settings ${raw}`);
    await checkSettings(m, r);
    await afterStep(m, r);
  }
  toString = () => `BadSetting(${JSON.stringify(pick(BAD_PUTS, this.n))})`;
}

/** Invalid values an older version could have left in settings.json: each is reported at start and ignored. */
const BAD_SAVED: [string, unknown][] = [
  ['log-level', 'bogus'], ['sim-journal-entries', 1e15], ['max-trace-mb', 'abc'], ['max-trace-mb', -5], ['history-days', { nested: 1 }],
  ['job-concurrency', [4]], ['max-artifact-expire-days', 1e9], ['max-build-batch-mb', 0], ['runner-offline-after-ms', 1.5],
  ['host', '8.8.8.8'], ['port', 99999], ['fsync', 'maybe'], ['unknown-setting', 5], ['max-artifact-mb', '1e400'],
];
const BROKEN_FILES = ['{"max-trace-mb": 2', '[1, 2]', '"text"', ''];

/**
 * settings.json written by hand while the server runs (as an older version could have left it): it
 * is shown at once with each value's problem, and at the next start (a Restart or Kill9 step) the
 * server must start, warn about each invalid value and keep the rest in force; an unreadable file is
 * reported and nothing in it applies. No restart here: each costs a full sweep.
 */
class WriteSettingsFile implements Cmd {
  constructor(readonly broken: boolean, readonly picks: number[]) {}
  check = () => true;
  async run(m: Model, r: RealSystem) {
    let text: string;
    if (this.broken) {
      text = pick(BROKEN_FILES, this.picks[0] ?? 0);
      m.saved = {};
      m.savedBad = {};
      m.fileBroken = true;
    } else {
      for (const i of this.picks) {
        const [name, value] = pick(BAD_SAVED, i);
        delete m.saved[name];
        m.savedBad[name] = value;
      }
      m.fileBroken = false;
      text = JSON.stringify({ ...m.saved, ...m.savedBad }, null, 2);
    }
    fs.writeFileSync(path.join(r.dataDir, 'settings.json'), text, { mode: 0o600 });
    await checkSettings(m, r);
    await afterStep(m, r);
  }
  toString = () => `WriteSettingsFile(${this.broken ? 'broken' : 'bad values'}, ${JSON.stringify(this.picks)})`;
}

/** Host values that do not name this server (bound to 127.0.0.1): 421 before anything runs. */
const FOREIGN_HOSTS = ['evil.example', 'evil.example:80', 'localhost.evil.example', '127.0.0.1.nip.io', '[::2]:80', '10.0.0.1', '0.0.0.0', 'a b', 'local host', 'LOCALHOST.evil:80'];
const OWN_HOSTS = ['localhost', 'LOCALHOST:1', '127.0.0.1:9', '127.200.1.2', '[::1]', '[::1]:8080', 'localhost.', 'localhost:65535'];
type HostRequest = 'get' | 'register' | 'build' | 'settings' | 'trace';

class HostProbe implements Cmd {
  constructor(readonly own: boolean, readonly host: number, readonly kind: HostRequest) {}
  check = (m: Readonly<Model>) => (this.kind !== 'build' || m.projects.length > 0) && (this.kind !== 'trace' || m.builds.length > 0);
  async run(m: Model, r: RealSystem) {
    const host = pick(this.own ? OWN_HOSTS : FOREIGN_HOSTS, this.host);
    const kind = this.own ? 'get' : this.kind;
    const json = { 'content-type': 'application/json' };
    const admin = { 'private-token': ADMIN, host };
    let res: Answer;
    const b = kind === 'trace' ? pick(m.builds, this.host) : undefined;
    if (kind === 'get') res = await r.request('GET', pick(['/api/v3/sim/builds?limit=5', '/api/app/settings', '/api/v3/sim/runners', '/ci/api/v1/builds/register.json'], this.host), { headers: admin });
    else if (kind === 'register') res = await r.request('POST', '/ci/api/v1/runners/register.json', { headers: { ...json, host }, body: JSON.stringify({ token: REGISTRATION }) });
    else if (kind === 'build') res = await r.request('POST', `/api/v3/sim/projects/${pick(m.projects, this.host).id}/builds`, { headers: { ...admin, ...json }, body: '{"count":3}' });
    else if (kind === 'settings') res = await r.request('PUT', '/api/app/settings', { headers: { ...admin, ...json }, body: '{"values":{"max-trace-mb":1}}' });
    else {
      const token = b!.token ?? m.project(b!.projectId).runnersToken;
      res = await r.request('PATCH', `/ci/api/v1/builds/${b!.id}/trace.txt`, { headers: { host, 'build-token': token, 'content-type': 'text/plain', 'content-range': `${b!.trace.length}-${b!.trace.length + 5}` }, body: 'hello' });
    }
    const what = `${kind} with Host ${JSON.stringify(host)}`;
    if (!this.own) {
      assert.equal(res.status, 421, `${what}: ${body(res)}`);
      assertMessage(res, what);
      // Nothing happened: no runner, no build, no saved setting, no trace bytes.
      if (kind === 'register') assert.equal(((await r.admin('GET', '/api/v3/sim/runners')).json() as unknown[]).length, m.live().length, `${what}: runners`);
      if (kind === 'build') await checkNewest(m, r, what);
      if (kind === 'settings') await checkSettings(m, r);
      if (kind === 'trace') await checkTraceTail(r, b!, b!.trace.length);
    } else if (res.status === 401 || res.status === 403 || res.status === 404 || res.status === 405) {
      // GET on a runner route that only takes POST: any answer but 421 shows the Host was accepted.
    } else assert.ok(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${body(res)}`);
    assert.notEqual(this.own ? res.status : 0, 421, `${what}: a Host naming this server was refused`);
    await afterStep(m, r, b);
  }
  toString = () => `HostProbe(${this.own ? 'own' : 'foreign'}#${this.host}, ${this.kind})`;
}

export function hardeningArbitraries(idx: fc.Arbitrary<number>): fc.WeightedArbitrary<Cmd>[] {
  const count = fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 30 },
    { arbitrary: fc.integer({ min: 1, max: 5 }), weight: 30 },
    { arbitrary: fc.integer({ min: 6, max: 40 }), weight: 5 },
    { arbitrary: fc.integer({ min: 200, max: 10_000 }), weight: 20 },
    { arbitrary: fc.constantFrom(0, 10_001), weight: 3 },
  );
  const fixed = fc.record({
    kind: fc.constant('fixed' as const),
    cmdBytes: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 200 }), weight: 12 }, { arbitrary: fc.integer({ min: 200, max: 8192 }), weight: 4 }, { arbitrary: fc.constantFrom(MiB, MiB + 1), weight: 1 }),
    optBytes: fc.oneof({ arbitrary: fc.constant(0), weight: 16 }, { arbitrary: fc.integer({ min: 1, max: 4096 }), weight: 4 }, { arbitrary: fc.constant(MiB + 1), weight: 1 }),
  });
  const ratio = fc.record({ kind: fc.constant('ratio' as const), ratio: fc.constantFrom(0.5, 0.97, 1.03, 1.5, 4), inOptions: fc.boolean() });
  const depth = fc.oneof({ arbitrary: fc.constant(0), weight: 20 }, { arbitrary: fc.integer({ min: 1, max: 63 }), weight: 3 }, { arbitrary: fc.constantFrom(64, 65), weight: 2 }, { arbitrary: fc.constant(4000), weight: 1 });
  return [
    {
      weight: 18,
      arbitrary: fc.tuple(idx, count, fc.oneof({ arbitrary: fixed, weight: 3 }, { arbitrary: ratio, weight: 2 }), depth).map(([p, c, s, d]) => new BuildBatch(p, c, s as BatchShape, d)),
    },
    {
      weight: 8,
      arbitrary: fc.tuple(fc.constantFrom<'model' | 'builtin' | 'unknown' | 'invalid'>('model', 'model', 'model', 'builtin', 'unknown', 'invalid'), idx).map(([k, n]) => new DeleteQueue(k, n)),
    },
    { weight: 8, arbitrary: idx.map((n) => new BadSetting(n)) },
    { weight: 3, arbitrary: fc.tuple(fc.boolean(), fc.array(idx, { minLength: 1, maxLength: 3 })).map(([b, p]) => new WriteSettingsFile(b, p)) },
    {
      weight: 10,
      arbitrary: fc
        .tuple(fc.boolean(), idx, fc.constantFrom<HostRequest>('get', 'register', 'build', 'settings', 'trace'))
        .map(([own, h, k]) => new HostProbe(own, h, k)),
    },
  ];
}
