// Helpers the runner-API conformance tests share: raw HTTP (any method, header and body, chunked when
// asked, as Go's client sends it), hand-written multipart, real zips, and a project/runner/build setup.
import nodeHttp from 'node:http';
import crypto from 'node:crypto';
import yazl from 'yazl';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import type { LooseJson } from '../helpers/json.ts';

export { RUNNER_UA };

export interface RawRes {
  status: number;
  headers: nodeHttp.IncomingHttpHeaders;
  raw: Buffer;
  /** Parsed JSON when the answer is JSON, else undefined. */
  json: LooseJson;
}

export interface RawOpts {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Send the body in pieces with Transfer-Encoding: chunked and no Content-Length (Go's io.Pipe upload). */
  chunks?: (Buffer | string)[];
}

/** One request over node:http, so tests control every header (fetch adds and normalises some). */
export function raw(url: string, opts: RawOpts = {}): Promise<RawRes> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.body !== undefined && !opts.chunks) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = nodeHttp.request(url, { method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(parts);
        let json: unknown;
        if (String(res.headers['content-type'] ?? '').startsWith('application/json') && body.length > 0) json = JSON.parse(body.toString('utf8'));
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: body, json });
      });
    });
    req.on('error', reject);
    if (opts.chunks) {
      for (const c of opts.chunks) req.write(c);
      req.end();
    } else req.end(opts.body);
  });
}

export interface Part {
  name: string;
  value: Buffer | string;
  filename?: string;
  contentType?: string;
}

/** A multipart/form-data body written by hand, the way Go's mime/multipart writes it. */
export function multipart(parts: Part[], boundary = crypto.randomBytes(30).toString('hex')): { body: Buffer; contentType: string } {
  const out: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    out.push(Buffer.from(head + '\r\n'), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(out), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Splits a buffer into pieces of `size` bytes (to send it chunked). */
export function pieces(buf: Buffer, size = 4096): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

/** A real zip archive of the given entries (what the runner's artifacts-uploader sends). */
export function makeZip(entries: Record<string, string | Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name, { mtime: new Date(2026, 0, 1) });
    else zip.addBuffer(Buffer.from(content), name, { mtime: new Date(2026, 0, 1) });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => parts.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(parts)));
    zip.outputStream.on('error', reject);
  });
}

/** The artifacts upload exactly as the runner sends it: one `file` part, Build-Token header, chunked. */
export function uploadArtifacts(s: TestServer, buildId: number, token: string | undefined, file: Buffer, opts: { filename?: string; query?: string } = {}) {
  const mp = multipart([{ name: 'file', filename: opts.filename ?? 'artifacts.zip', contentType: 'application/octet-stream', value: file }]);
  const headers: Record<string, string> = { 'user-agent': RUNNER_UA, 'content-type': mp.contentType, 'accept-encoding': 'gzip' };
  if (token !== undefined) headers['build-token'] = token;
  return raw(`${s.url}/ci/api/v1/builds/${buildId}/artifacts${opts.query ?? ''}`, { method: 'POST', headers, chunks: pieces(mp.body, 1000) });
}

/** The `info` object a real 1.11.5 runner sends with every JSON request. */
export const INFO = {
  name: 'gitlab-ci-multi-runner',
  version: '1.11.5',
  revision: 'cbfcb5c8',
  platform: 'linux',
  architecture: 'amd64',
  executor: 'shell',
  features: { variables: true, image: false, services: false, features: false, cache: false },
};

/** A runner-style JSON request (canonical headers, User-Agent because it has a body). */
export function runnerJson(url: string, method: string, body: unknown, extra: Record<string, string> = {}) {
  return raw(url, {
    method,
    headers: { 'user-agent': RUNNER_UA, 'content-type': 'application/json', 'accept-encoding': 'gzip', ...extra },
    body: JSON.stringify(body),
  });
}

export function patchTrace(s: TestServer, buildId: number | string, opts: { token?: string; query?: string; range?: string; body?: Buffer | string; headers?: Record<string, string> }) {
  const headers: Record<string, string> = { 'user-agent': RUNNER_UA, 'content-type': 'text/plain', ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers['Build-Token'] = opts.token;
  if (opts.range !== undefined) headers['Content-Range'] = opts.range;
  return raw(`${s.url}/ci/api/v1/builds/${buildId}/trace.txt${opts.query ?? ''}`, { method: 'PATCH', headers, body: opts.body ?? '' });
}

export interface Running {
  project: { id: number; name: string; runners_token: string; ci_token: string };
  runner: { id: number; token: string };
  build: LooseJson;
}

/** A project, a project runner, and one build that the runner has taken (status running). */
export async function runningBuild(s: TestServer, buildBody: Record<string, unknown> = {}, name = 'p'): Promise<Running> {
  const project = await createProject(s, name);
  const runner = await registerRunner(s, project.runners_token);
  await createBuild(s, project.id, buildBody);
  const r = await http(`${s.url}/ci/api/v1/builds/register.json`, { json: { token: runner.token }, headers: { 'user-agent': RUNNER_UA } });
  if (r.status !== 201) throw new Error(`take build: ${r.status}`);
  return { project, runner, build: r.body };
}

export function control(s: TestServer, path: string, opts: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) {
  return http(`${s.url}/api/v3/sim${path}`, { ...opts, token: s.adminToken });
}
