// Thousands of generated malformed and hostile requests against every route the server documents
// (enumerated from its OpenAPI document, so new routes are covered without editing this file), then
// raw malformed HTTP over plain sockets. Zero 5xx, zero hangs, JSON errors, nothing written outside
// the data dir, no prototype pollution, and a normal build flow still works afterwards.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { json, patchTrace, prng, request, seedOf, uploadArtifact, RUNNER_UA, type Reply, type Rng } from './support.ts';

const SEED = seedOf('hostile', 4242);
const TOTAL = 5200;
const CONCURRENCY = Number(process.env.HOSTILE_CONCURRENCY ?? 8);
const MARKER = `hostile-marker-${SEED}`;

const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-hostile-'));
let s: TestServer;
let runnerToken = '';
let build = { id: 0, token: '' };
let project = { id: 0, runners_token: '', ci_token: '' };

/** Every file under a folder with its size and mtime: what "nothing written" is checked against. */
function snapshot(dir: string, skip: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (p === skip) continue;
      if (e.isDirectory()) walk(p);
      else {
        const st = fs.statSync(p);
        out.set(p, `${st.size}:${st.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out;
}
const hash = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

const dataDir = path.join(sandbox, 'data');
// A decoy beside the data dir: traversal names aim at it.
const decoy = path.join(sandbox, 'etc');
let before: Map<string, string>;
let passwdHash: string;

beforeAll(async () => {
  fs.mkdirSync(decoy);
  fs.writeFileSync(path.join(decoy, 'passwd'), 'root:x:0:0\n');
  before = snapshot(sandbox, dataDir);
  passwdHash = hash('/etc/passwd');
  // Small limits so "oversized" stays cheap.
  s = await startServer({ dataDir, maxArtifactBytes: 1, maxTraceBytes: 1 });
  const admin = { 'private-token': s.adminToken };
  project = (await json(`${s.url}/api/v3/sim/projects`, 'POST', { name: 'hostile' }, admin)).body;
  await json(`${s.url}/api/v3/sim/projects/${project.id}/builds`, 'POST', { count: 40 }, admin);
  runnerToken = (await json(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken })).body.token;
  const b = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runnerToken });
  build = { id: b.body.id, token: b.body.token };
});

afterAll(async () => {
  await s?.close();
  fs.rmSync(sandbox, { recursive: true, force: true });
});

interface Route {
  method: string;
  path: string;
}

const BAD_IDS = [
  'abc', '-1', '0', '1.5', '1e3', '99999999999999999999999999', '9007199254740993', 'ü', '%F0%9F%92%A9', '%E2%80%AE1',
  '..%2f..%2fetc%2fpasswd', '..%252f..%252f', '%2e%2e', '%00', '1%00', '1.json', '1;rm', '%20', '0x10', 'NaN', 'Infinity',
  'null', 'undefined', '__proto__', 'constructor', 'x'.repeat(300), '1'.repeat(40), `..%5c..%5c${MARKER}`,
];
const BAD_TOKENS = ['', ' ', 'x', 'a'.repeat(10_000), 'ü€😀', '\u0000', '%00', 'null', '[object Object]', '../../etc/passwd', '__proto__'];
const CONTENT_RANGES = ['', 'bytes=abc', '-5-10', '99999999999999999999-1', '0-', 'NaN', '1-0', '💥-1', '0-18446744073709551616', ' 0 - 1', '-0', 'bytes */*', '0-1,2-3'];
const TYPES = [
  'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=',
  'text/xml', 'application/octet-stream', 'application/json; charset=utf-16', 'application/vnd.api+json', ';;;', 'application/json\u00ff',
];
const POLLUTION = [
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":{"__proto__":{"polluted":1}},"token":{"__proto__":{"polluted":1}}}',
  '[{"__proto__":{"polluted":1}}]',
];
const BAD_JSON = ['{', '{"a":', 'nul', '{"a":1}}', '\u0000', '{"token":{"$ne":null}}', '{"token":["a","b"]}', '{"token":12345}', '{"id":-1,"count":1e309}', '"str"', '123', 'true', '[]', '{"a":"\\ud800"}'];
const FORMS = ['__proto__[polluted]=1', 'constructor[prototype][polluted]=1', 'token=%00', 'a=1&a=2&a[]=3', 'token[]=x&token[a]=y', '%zz=1', '&&&==='];

function deepJson(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function multipartBody(rng: Rng): { type: string; body: Buffer } {
  const boundary = `b${rng.int(1, 1e9)}`;
  const names = [`../../${MARKER}`, `..\\..\\${MARKER}`, `${MARKER}\u0000.zip`, `/etc/${MARKER}`, `C:\\${MARKER}`, '..', '.', '', `${'ü'.repeat(300)}`, `a"b\r\nX-Injected: 1`];
  const name = rng.pick(names);
  const kind = rng.int(0, 7);
  const part = (field: string, filename?: string, content: Buffer | string = 'PK\u0003\u0004') =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"${filename !== undefined ? `; filename="${filename}"` : ''}\r\n\r\n`),
      Buffer.from(content),
      Buffer.from('\r\n'),
    ]);
  const end = Buffer.from(`--${boundary}--\r\n`);
  let body: Buffer;
  if (kind === 0) body = Buffer.concat([part('file', name), end]);
  else if (kind === 1) body = part('file', name).subarray(0, rng.int(5, 60)); // truncated
  else if (kind === 2) body = Buffer.concat([part('__proto__', undefined, 'x'), part('constructor', undefined, 'y'), part('file', name), end]);
  else if (kind === 3) body = Buffer.concat(Array.from({ length: 80 }, (_, i) => part(`f${i}`, undefined, 'v')).concat([end]));
  else if (kind === 4) body = Buffer.concat([part('file', name, rng.bytes(1024 * 1024 + 4096)), end]); // over the 1 MiB limit
  else if (kind === 5) body = Buffer.from(`--${boundary}\r\nContent-Disposition: garbage\r\n\r\nxx\r\n--${boundary}--`);
  else if (kind === 6) body = Buffer.concat([part('token', undefined, 'nope'), part('file', name), end]);
  else body = Buffer.concat([part('file', name), part('file', name), end]);
  const types = [`multipart/form-data; boundary=${boundary}`, 'multipart/form-data', `multipart/form-data; boundary="${boundary}`, `multipart/mixed; boundary=${boundary}`];
  return { type: rng.int(0, 3) === 0 ? rng.pick(types) : types[0]!, body };
}

interface Generated {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  label: string;
}

function generate(rng: Rng, routes: Route[], base: string): Generated {
  const route = rng.pick(routes);
  const method = rng.int(0, 19) === 0 ? rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) : route.method;
  const validId = rng.int(0, 2) === 0;
  const id = validId ? String(build.id) : rng.pick(BAD_IDS);
  let p = route.path.replace(/\{[^}]+\}/g, id);
  const headers: Record<string, string> = { 'user-agent': rng.int(0, 1) ? RUNNER_UA : 'hostile/1.0' };
  const query: string[] = [];
  // Credentials: mostly the right kind for the route (so requests get past authentication and reach
  // the handlers), else none, garbage, or a valid one of the wrong kind.
  const right = route.path.startsWith('/api/') ? s.adminToken : route.path.includes('/builds/{id}') ? build.token : rng.pick([runnerToken, s.registrationToken]);
  const tokenKind = rng.int(0, 9);
  const token = tokenKind === 0 ? undefined : tokenKind <= 2 ? rng.pick(BAD_TOKENS) : tokenKind === 3 ? rng.pick([build.token, runnerToken, s.adminToken]) : right;
  if (token !== undefined) {
    const where = rng.int(0, 3);
    const safe = /^[\x21-\x7e]*$/.test(token);
    if (where <= 1 && safe) headers[route.path.startsWith('/api/') ? 'private-token' : 'build-token'] = token;
    else query.push(`${route.path.startsWith('/api/') ? 'private_token' : 'token'}=${encodeURIComponent(token)}`);
  }
  if (rng.int(0, 4) === 0) query.push(rng.pick(FORMS));
  if (rng.int(0, 9) === 0) query.push(`status=${rng.pick(['bogus', 'running', '1', ''])}&limit=${rng.pick(['-1', '0', '1e9', 'abc', '5'])}&project_id=${rng.pick(BAD_IDS)}`);
  if (p.endsWith('/trace.txt') || rng.int(0, 5) === 0) headers['content-range'] = rng.pick(CONTENT_RANGES);
  if (rng.int(0, 6) === 0) headers.range = rng.pick(['bytes=abc', 'bytes=-5', 'bytes=99999999999999999999-', 'bytes=0-1,2-3', 'items=0-', 'bytes=5-']);
  if (rng.int(0, 30) === 0) p += '/' + rng.pick(['..', '%2e%2e/%2e%2e', MARKER, '.json']);
  let body: Buffer | string | undefined;
  const bodyKind = method === 'GET' || method === 'HEAD' ? rng.int(0, 5) : rng.int(0, 8);
  let label = 'none';
  if (bodyKind === 1) {
    body = rng.pick(POLLUTION);
    headers['content-type'] = 'application/json';
    label = 'pollution';
  } else if (bodyKind === 2) {
    body = rng.pick(BAD_JSON);
    headers['content-type'] = rng.int(0, 3) ? 'application/json' : rng.pick(TYPES);
    label = 'bad-json';
  } else if (bodyKind === 3) {
    body = rng.pick(FORMS);
    headers['content-type'] = 'application/x-www-form-urlencoded';
    label = 'form';
  } else if (bodyKind === 4) {
    const m = multipartBody(rng);
    body = m.body;
    headers['content-type'] = m.type;
    label = 'multipart';
  } else if (bodyKind === 5) {
    body = rng.bytes(rng.int(0, 2048));
    headers['content-type'] = rng.pick(TYPES);
    label = 'random-bytes';
  } else if (bodyKind === 6) {
    body = deepJson(rng.pick([100, 5000, 100_000]));
    headers['content-type'] = 'application/json';
    label = 'deep-json';
  } else if (bodyKind === 7) {
    // Over the trace limit (1 MiB) and the JSON body limit (limit + 1 MiB): a few only, they are big.
    body = rng.int(0, 9) === 0 ? Buffer.alloc(2 * 1024 * 1024 + 10, 0x61) : JSON.stringify({ token: runnerToken, trace: 'x'.repeat(rng.int(10, 5000)), state: rng.pick(['success', 'bogus', '', 'running']) });
    headers['content-type'] = rng.int(0, 1) ? 'application/json' : 'text/plain';
    label = 'big-or-state';
  } else if (bodyKind === 8) {
    body = JSON.stringify({ token: rng.pick([runnerToken, s.registrationToken, ...BAD_TOKENS]), name: rng.pick(BAD_TOKENS), username: rng.pick(BAD_TOKENS), count: rng.pick([0, -1, 1e9, 'x', 2]), info: { name: { $gt: '' } }, tag_list: rng.pick(['a,b', ['x'], { a: 1 }, 7]) });
    headers['content-type'] = 'application/json';
    label = 'typed-json';
  }
  const q = query.length ? `?${query.join('&')}` : '';
  // node:http only sends Latin-1 header values: pass other text as its UTF-8 bytes, as a raw client would.
  for (const [k, v] of Object.entries(headers)) headers[k] = Buffer.from(v, 'utf8').toString('latin1');
  return { method, url: `${base}${p}${q}`, headers, body, label: `${method} ${route.path} [${label}] id=${id.slice(0, 30)}` };
}

function checkAnswer(g: Generated, r: Reply, failures: string[]) {
  if (r.status >= 500) failures.push(`${r.status} for ${g.label}: ${r.body.toString().slice(0, 200)}`);
  if (r.status >= 400 && r.status < 500 && g.method !== 'HEAD') {
    let ok = false;
    try {
      const parsed = JSON.parse(r.body.toString('utf8')) as { message?: unknown };
      ok = typeof parsed.message === 'string' && String(r.headers['content-type']).startsWith('application/json');
    } catch {
      ok = false;
    }
    if (!ok) failures.push(`${r.status} without a JSON {message} for ${g.label}: ${r.body.toString().slice(0, 120)}`);
  }
}

test(`${TOTAL} generated hostile requests across every documented route: no 5xx, no hang, JSON errors`, async () => {
  const doc = (await json(`${s.url}/api/docs/json`, 'GET', undefined)).body as { paths: Record<string, Record<string, unknown>> };
  const routes: Route[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) routes.push({ method: m.toUpperCase(), path: p });
  routes.push({ method: 'GET', path: '/api/docs/json' }, { method: 'GET', path: '/' }, { method: 'GET', path: '/does/not/exist' });
  expect(routes.length, 'the OpenAPI document lists the routes').toBeGreaterThan(15);
  console.log(`[hostile] ${routes.length} routes from /api/docs/json`);

  const rng = prng(SEED);
  const requests = Array.from({ length: TOTAL }, () => generate(rng, routes, s.url));
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let next = 0;
  let resets = 0;
  const worker = async () => {
    while (next < requests.length) {
      const g = requests[next++]!;
      try {
        const r = await request(g.url, { method: g.method, headers: g.headers, body: g.body, agent, timeoutMs: 10_000 });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        checkAnswer(g, r, failures);
      } catch (err) {
        const msg = (err as Error).message;
        // The server may answer 413 and close before an oversized body is all sent; that is no hang.
        if (/ECONNRESET|EPIPE|socket hang up/.test(msg) && Buffer.byteLength(g.body ?? '') > 1024 * 1024) resets++;
        else failures.push(`${g.label}: ${msg} (url ${g.url.slice(s.url.length, s.url.length + 120)}, headers ${JSON.stringify(g.headers).slice(0, 300)}, body ${JSON.stringify(String(g.body ?? '').slice(0, 80))})`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  console.log(`[hostile] statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; ${resets} resets on oversized bodies`);
  expect(failures.slice(0, 30)).toEqual([]);
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype was polluted').toBeUndefined();
  expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
}, 150_000);

/** Writes raw bytes on a fresh socket; resolves with whatever came back before close or timeout. */
function raw(port: number, payload: Buffer | string, opts: { waitMs?: number } = {}): Promise<{ data: string; closed: boolean }> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = '';
    let closed = false;
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ data, closed });
    }, opts.waitMs ?? 3000);
    sock.on('data', (d) => (data += d.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ data, closed });
    });
    sock.write(payload);
  });
}

test('raw malformed HTTP gets a 4xx or a closed connection, and slow clients do not stall others', async () => {
  const port = Number(new URL(s.url).port);
  const H = `Host: 127.0.0.1:${port}\r\n`;
  const trace = `/ci/api/v1/builds/${build.id}/trace.txt`;
  const payloads: (string | Buffer)[] = [
    'GARBAGE\r\n\r\n',
    '\r\n\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    'GET\r\n\r\n',
    'GET /ci/api/v1/builds/1 FOO/1.1\r\n\r\n',
    `GET ${'/a'.repeat(40_000)} HTTP/1.1\r\n${H}\r\n`,
    `GET / HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
    `GET / HTTP/1.1\r\n${H}${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
    `GET / HTTP/1.1\r\n${H}NoColonHere\r\n\r\n`,
    Buffer.from(`GET / HTTP/1.1\r\n${H}X-Nul: a\u0000b\r\n\r\n`, 'latin1'),
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`,
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 7\r\n\r\n12345`,
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n`,
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n5\r\n{"a":1}\r\n0\r\n\r\n`,
    `POST /ci/api/v1/builds/register.json HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    `PATCH ${trace} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Range: 0-5\r\nBuild-Token: ${build.token}\r\n\r\nffffffffffffffff\r\nabc\r\n`,
    `PATCH ${trace} HTTP/1.1\r\n${H}Content-Length: 100\r\nContent-Range: 0-100\r\nBuild-Token: ${build.token}\r\n\r\nonly-a-little`,
    `POST /ci/api/v1/builds/${build.id}/artifacts HTTP/1.1\r\n${H}Content-Type: multipart/form-data; boundary=zz\r\nBuild-Token: ${build.token}\r\nContent-Length: 500\r\n\r\n--zz\r\nContent-Disposition: form-data; name="file"; filename="../../${MARKER}"\r\n\r\nPK`,
    `GET http://evil.example/ci/api/v1/builds/1/artifacts HTTP/1.1\r\n${H}\r\n`,
    `OPTIONS * HTTP/1.1\r\n${H}\r\n`,
    `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${H}\r\n`,
    `GET /../../../etc/passwd HTTP/1.1\r\n${H}\r\n`,
    `GET /ci/api/v1/builds/%2e%2e%2f%2e%2e%2fetc%2fpasswd/artifacts HTTP/1.1\r\n${H}\r\n`,
    `GET / HTTP/1.1\r\n${H}\r\nGARBAGE-AFTER-A-VALID-REQUEST\r\n\r\n`,
    `GET / HTTP/1.0\r\n\r\n`,
    Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), // a TLS ClientHello on a plain port
  ];
  // All at once: each waits at most 3 s for an answer, and a stalled one must not hold up the rest.
  const answers = await Promise.all(payloads.map((p) => raw(port, p, { waitMs: 3000 })));
  answers.forEach((r, i) => {
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(r.data);
    const what = `payload ${JSON.stringify(String(payloads[i]).slice(0, 80))} → ${JSON.stringify(r.data.slice(0, 120))}`;
    if (m) expect(Number(m[1]), what).toBeLessThan(500);
    else expect(r.data, what).toBe(''); // no answer at all: closed, or still waiting for the rest of a truncated request
  });

  // Slowloris: 64 connections that send half a request and stall, plus one that drips a body.
  const stalled: net.Socket[] = [];
  for (let i = 0; i < 64; i++) {
    const sock = net.connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    sock.write(i % 2 ? `GET /api/v3/sim/instance HTTP/1.1\r\n${H}X-Slow: ` : `PATCH ${trace} HTTP/1.1\r\n${H}Content-Length: 100000\r\nContent-Range: 0-100000\r\n\r\nabc`);
    stalled.push(sock);
  }
  // The server keeps serving everyone else meanwhile.
  for (let i = 0; i < 5; i++) {
    const r = await request(`${s.url}/api/v3/sim/instance`, { headers: { 'private-token': s.adminToken }, timeoutMs: 5000 });
    expect(r.status).toBe(200);
  }
  for (const sock of stalled) sock.destroy();
  // A half-sent PATCH must not have appended anything (its length is unchanged by the stall).
  const t = await request(`${s.url}/api/v3/sim/builds/${build.id}/trace`, { headers: { 'private-token': s.adminToken } });
  expect(t.status).toBe(200);
}, 120_000);

test('afterwards: nothing written outside the data dir, no pollution, and a full build flow works', async () => {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  const after = snapshot(sandbox, dataDir);
  expect([...after.entries()]).toEqual([...before.entries()]);
  expect(hash('/etc/passwd')).toBe(passwdHash);
  for (const dir of [os.tmpdir(), '/', process.cwd(), path.dirname(dataDir)]) {
    expect(fs.readdirSync(dir).filter((n) => n.includes(MARKER)), `traversal file in ${dir}`).toEqual([]);
  }
  // Inside the data dir, only server-made names.
  for (const name of fs.readdirSync(path.join(dataDir, 'artifacts'))) expect(name).toMatch(/^\d+-[0-9a-f]{16}\.bin$/);
  for (const name of fs.readdirSync(path.join(dataDir, 'traces'))) expect(name).toMatch(/^\d+\.log$/);

  // A valid flow: a fresh runner takes a build, streams its trace, uploads and downloads artifacts, finishes.
  const admin = { 'private-token': s.adminToken };
  const created = await json(`${s.url}/api/v3/sim/projects/${project.id}/builds`, 'POST', { name: 'after-hostile' }, admin);
  expect(created.status).toBe(201);
  const runner = await json(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken, description: 'after' });
  expect(runner.status).toBe(201);
  let got: { status: number; body: { id: number; token: string } } | undefined;
  for (let i = 0; i < 60; i++) {
    got = await json(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.body.token });
    if (got.status !== 201 || got.body.id === created.body.id) break;
  }
  expect(got?.status).toBe(201);
  expect(got?.body.id).toBe(created.body.id);
  const b = got!.body;
  const r1 = await patchTrace(s.url, b.id, b.token, 0, Buffer.from('hello '));
  expect(r1.status).toBe(202);
  const r2 = await patchTrace(s.url, b.id, b.token, 6, Buffer.from('world'));
  expect(r2.headers.range).toBe('0-11');
  const content = crypto.randomBytes(200_000);
  const up = await uploadArtifact(s.url, b.id, b.token, content, { filename: `../../${MARKER}.zip` }).done;
  expect(up.status).toBe(201);
  const down = await request(`${s.url}/ci/api/v1/builds/${b.id}/artifacts`, { headers: { 'build-token': b.token } });
  expect(down.status).toBe(200);
  expect(down.body.equals(content)).toBe(true);
  expect(String(down.headers['content-disposition'])).not.toContain('/');
  const put = await json(`${s.url}/ci/api/v1/builds/${b.id}.json`, 'PUT', { token: runner.body.token, state: 'success', trace: 'hello world' });
  expect(put.status).toBe(200);
  const view = await json(`${s.url}/api/v3/sim/builds/${b.id}`, 'GET', undefined, admin);
  expect(view.body.status).toBe('success');
  expect(fs.readdirSync(path.dirname(dataDir)).filter((n) => n.includes(MARKER))).toEqual([]);
});
