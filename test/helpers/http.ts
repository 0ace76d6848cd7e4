// A small fetch wrapper for tests: real HTTP, JSON in and out, headers and raw bytes kept.
import type { LooseJson } from './json.ts';
export interface Res<T = LooseJson> {
  status: number;
  headers: Headers;
  body: T;
  raw: Buffer;
}

export async function http<T = LooseJson>(
  url: string,
  opts: { method?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string>; token?: string } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(opts.json);
  }
  if (opts.token) headers['private-token'] = opts.token;
  const res = await fetch(url, { method: opts.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  const raw = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = raw.toString('utf8');
  if ((res.headers.get('content-type') ?? '').startsWith('application/json') && raw.length > 0) parsed = JSON.parse(raw.toString('utf8'));
  return { status: res.status, headers: res.headers, body: parsed as T, raw };
}

/** The User-Agent a real gitlab-ci-multi-runner 1.11.5 sends (it makes "no build" a 204). */
export const RUNNER_UA = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';
