// The runner API v1 as gitlab-ci-multi-runner 1.11.5 calls it: the same paths (with and without
// `.json` where it uses them), JSON bodies with `info`, header names in Go's canonical case,
// `User-Agent` only when there is a body, the build token only in `Build-Token`, chunked uploads.
// Used by the virtual runners and by the runner console.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { HttpClient, type Answer, type Exchange } from './http-client.ts';

export const RUNNER_USER_AGENT = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';

export function runnerInfo(withExecutor: boolean) {
  return {
    name: 'gitlab-ci-multi-runner',
    version: '1.11.5',
    revision: 'cbfcb5c8',
    platform: 'linux',
    architecture: 'amd64',
    ...(withExecutor ? { executor: 'shell' } : {}),
    // Sic: the runner serializes its artifacts flag under "features".
    features: { variables: withExecutor, image: false, services: false, features: false, cache: false },
  };
}

/** The runner's base URL rule (1.11.5): add `/ci` unless the URL ends in it, then `/api/v1`. */
export function runnerApiBase(target: string): string {
  const u = target.replace(/\/+$/, '');
  return `${u.endsWith('/ci') ? u : `${u}/ci`}/api/v1`;
}

/** Jobscope's control API next to a runner API target. */
export function controlApiBase(target: string): string {
  return `${target.replace(/\/+$/, '').replace(/\/ci$/, '')}/api/v3/sim`;
}

export type Extra = Pick<Exchange, 'fault' | 'dropAfterBytes' | 'dribble' | 'onProgress' | 'keepBytes' | 'digest' | 'buildId'>;

export interface BuildPayload {
  id: number;
  token: string;
  project_id: number;
  sha: string;
  ref: string;
  commands: string;
  name?: string;
  options?: { artifacts?: { name?: string; expire_in?: string; when?: string } } & Record<string, unknown>;
  [k: string]: unknown;
}

export class RunnerApi {
  readonly base: string;
  constructor(
    readonly client: HttpClient,
    readonly target: string,
    readonly who: string,
  ) {
    this.base = runnerApiBase(target);
  }

  private json(method: string, path: string, body: unknown, accept: boolean, extra: Extra = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'User-Agent': RUNNER_USER_AGENT };
    if (accept) headers.Accept = 'application/json';
    headers['Content-Type'] = 'application/json';
    headers['Accept-Encoding'] = 'gzip';
    return this.client.send({ method, url: `${this.base}/${path}`, headers, body: Buffer.from(JSON.stringify(body)), runner: this.who, ...extra });
  }

  register(registrationToken: string, o: { description: string; tagList?: string; runUntagged?: boolean }, extra?: Extra) {
    const tags = o.tagList?.trim() ?? '';
    return this.json(
      'POST',
      'runners/register.json',
      {
        info: runnerInfo(false),
        token: registrationToken,
        description: o.description,
        ...(tags ? { tag_list: tags } : {}),
        run_untagged: tags ? (o.runUntagged ?? false) : true,
      },
      true,
      extra,
    );
  }

  poll(token: string, lastUpdate: string | undefined, extra?: Extra) {
    return this.json('POST', 'builds/register.json', { info: runnerInfo(true), token, ...(lastUpdate !== undefined ? { last_update: lastUpdate } : {}) }, true, extra);
  }

  update(buildId: number, token: string, state: string | undefined, trace: Buffer | string | undefined, extra?: Extra) {
    const body: Record<string, unknown> = { info: runnerInfo(true), token };
    if (state !== undefined) body.state = state;
    if (trace !== undefined) body.trace = Buffer.isBuffer(trace) ? trace.toString('utf8') : trace;
    return this.json('PUT', `builds/${buildId}.json`, body, false, { buildId, ...extra });
  }

  patchTrace(buildId: number, buildToken: string, contentRange: string, body: Buffer, extra?: Extra) {
    return this.client.send({
      method: 'PATCH',
      url: `${this.base}/builds/${buildId}/trace.txt`,
      headers: {
        'User-Agent': RUNNER_USER_AGENT,
        'Build-Token': buildToken,
        'Content-Range': contentRange,
        'Content-Type': 'text/plain',
        'Accept-Encoding': 'gzip',
      },
      body,
      runner: this.who,
      buildId,
      ...extra,
    });
  }

  /** Multipart with the one `file` part, streamed chunked (no Content-Length), as the runner's io.Pipe. */
  upload(buildId: number, buildToken: string, filename: string, file: Readable | Buffer | Iterable<Buffer> | AsyncIterable<Buffer>, expireIn: string | undefined, extra?: Extra) {
    const boundary = crypto.randomBytes(30).toString('hex');
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename.replace(/["\r\n]/g, '_')}"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    // A generated archive (a sync iterable) is framed without an async step per piece.
    function* framed(pieces: Iterable<Buffer>) {
      yield head;
      yield* pieces;
      yield tail;
    }
    async function* body() {
      yield head;
      for await (const chunk of file as AsyncIterable<Buffer>) yield chunk as Buffer;
      yield tail;
    }
    const sync = Buffer.isBuffer(file) ? [file] : Symbol.iterator in file ? (file as Iterable<Buffer>) : undefined;
    const query = expireIn ? `?expire_in=${new URLSearchParams({ x: expireIn }).toString().slice(2)}` : '';
    return this.client.send({
      method: 'POST',
      url: `${this.base}/builds/${buildId}/artifacts${query}`,
      headers: {
        'User-Agent': RUNNER_USER_AGENT,
        'Build-Token': buildToken,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Accept-Encoding': 'gzip',
      },
      body: sync ? framed(sync) : body(),
      runner: this.who,
      buildId,
      ...extra,
    });
  }

  /** No body, so Go's default User-Agent, as artifacts-downloader sends it. */
  download(buildId: number, buildToken: string, extra?: Extra) {
    return this.client.send({
      method: 'GET',
      url: `${this.base}/builds/${buildId}/artifacts`,
      headers: { 'User-Agent': 'Go-http-client/1.1', 'Build-Token': buildToken, 'Accept-Encoding': 'gzip' },
      runner: this.who,
      buildId,
      ...extra,
    });
  }

  /** No 1.x runner sends this; the console does, to test the endpoint. */
  deleteArtifacts(buildId: number, buildToken: string, extra?: Extra) {
    return this.client.send({
      method: 'DELETE',
      url: `${this.base}/builds/${buildId}/artifacts`,
      headers: { 'User-Agent': 'Go-http-client/1.1', 'Build-Token': buildToken, 'Accept-Encoding': 'gzip' },
      runner: this.who,
      buildId,
      ...extra,
    });
  }

  unregister(token: string, extra?: Extra) {
    return this.json('DELETE', 'runners/delete', { token }, false, extra);
  }
}

/** The runner's rule for a JSON answer: media type application/json (parameters allowed) and valid JSON. */
export function jsonOf<T>(a: Answer): T | undefined {
  const type = a.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  if (type.split(';')[0]!.trim().toLowerCase() !== 'application/json') return undefined;
  try {
    return JSON.parse(a.body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** `Range: 0-N` → N (the runner reads `split("-")[1]`). */
export function rangeEnd(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^\s*\d+\s*-\s*(\d+)\s*$/.exec(value);
  return m ? Number(m[1]) : undefined;
}
